// The demo page's Chat view: edit a conversation (each message a role, a name, a content — a
// string or content parts: text and images —, an assistant's tool calls, a tool message's
// tool_call_id; add, remove, move; paste a messages array or a whole request as JSON; drop
// images), pick a model, and see the tokens the model is given for it.  For an OpenAI model the
// headline is what the request is billed (tok.countChat(request, { report: true }), native
// chat.request_report: tools, tool calls and images included) with its breakdown and what is
// not counted; the coloured tokens are the ChatML rendering of the text (tok.encodeChat).  For
// gpt-oss, harmony's rendering; for a Hugging Face tokenizer opened with its
// tokenizer_config.json (files or a folder), its chat template (tok.applyChatTemplate).
//
// Every edit marks the view busy at once and recounts a moment later; a count that an edit
// overtook is dropped, so what is shown (and data-state=ready) is always the current messages'.

import { AnyTok } from "./anytok.js";

const $ = (id) => document.getElementById(id);
const fmt = new Intl.NumberFormat("en");

// The model list: OpenAI chat models (gpt-tokenizer's encodeChat) and gpt-oss (harmony).
const MODELS = {
  "gpt-4o": "o200k_base",
  "gpt-4o-mini": "o200k_base",
  "gpt-4.1": "o200k_base",
  "gpt-4.1-mini": "o200k_base",
  "gpt-4": "cl100k_base",
  "gpt-3.5-turbo": "cl100k_base",
  "gpt-oss-120b": "o200k_harmony",
};
const ROLES = ["system", "developer", "user", "assistant", "tool"];
const TEXT_PARTS = new Set(["text", "input_text", "output_text"]);
const IMAGE_PARTS = new Set(["image_url", "input_image"]);
const DETAILS = ["auto", "low", "high"];
// A dropped image's first bytes, as a data URL: what is sent for counting (the header holds the
// size), so that a recount does not ship megabytes to the worker.  part -> data URL.
const HEAD_BYTES = 512 * 1024;
const heads = new WeakMap();
// The ChatML tokens gpt-tokenizer adds to an encoding for chat (anytok/chat/openai.py): not in
// the encoding's own vocabulary, so decode does not know them.
const CHAT_SPECIALS = {
  cl100k_base: { 100264: "<|im_start|>", 100265: "<|im_end|>", 100266: "<|im_sep|>" },
  o200k_base: { 200003: "<|im_start|>", 200004: "<|im_end|>", 200005: "<|im_sep|>" },
};
const EXAMPLE = [
  { role: "system", content: "You are a helpful assistant. Answer in one sentence." },
  { role: "user", content: "How many tokens does this conversation take?" },
  { role: "assistant", content: "Fewer than you might think: about fifty." },
  { role: "user", content: "Show me where they go." },
];

const demo = {
  messages: EXAMPLE.map((m) => ({ ...m })),
  model: "gpt-4o",
  tok: null,
  toks: new Map(), // encoding name -> Promise of its tokenizer
  total: null,
  shares: [], // what each message adds, then the reply prime
  ids: [],
  tools: null, // the Tools (JSON) field's array, or null when empty
  effort: "", // gpt-oss: a reasoning effort puts a harmony system message first ("" none)
  date: "", // ... with this conversation start date, if any
  systemShare: null, // that system message's tokens
  requestTotal: null, // an OpenAI model with tools: the request's count (countChat of a request)
  report: null, // an OpenAI model: chat.request_report of the request (the headline)
  extra: {}, // other fields of a pasted request (tool_choice, response_format, ...): counted or reported
  state: "idle", // idle, busy, ready, error
  generation: 0, // bumped by every edit
};
window.anytokChatDemo = demo;

// Tokenizers opened with a chat template: option value "template:N" -> { tok, label }.
const templates = new Map();
const templated = () => templates.get(demo.model) ?? null;
const harmony = () => MODELS[demo.model] === "o200k_harmony";

function setState(state, message = "") {
  demo.state = state;
  $("chat-view").dataset.state = state;
  $("chat-message").textContent = message;
  $("chat-message").className = `train-message ${state === "error" ? "bad" : ""}`;
}

function errorText(err) {
  return err?.pythonType ? `${err.pythonType}: ${err.message}` : err?.message ?? String(err);
}

function tokenizer(name) {
  if (!demo.toks.has(name)) {
    const loading = AnyTok.load({ encoding: name });
    demo.toks.set(name, loading);
    loading.catch(() => demo.toks.delete(name));
  }
  return demo.toks.get(name);
}

// --- the message editor ---------------------------------------------------------------------

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "label") e.setAttribute("aria-label", v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k === "on") for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
    else e[k] = v;
  }
  e.append(...children);
  return e;
}

function quietButton(text, title, action, extra = "") {
  return el("button", { type: "button", className: `quiet ${extra}`, textContent: text, title, label: title,
                        on: { click: action } });
}

const textOf = (content) => (Array.isArray(content)
  ? content.filter((p) => p && TEXT_PARTS.has(p.type)).map((p) => p.text ?? "").join("")
  : content ?? "");

// The ids of the earlier assistant messages' tool calls, for a tool message's tool_call_id.
function callIds(upTo) {
  return demo.messages.slice(0, upTo).flatMap((m) => (Array.isArray(m.tool_calls) ? m.tool_calls : []))
    .map((c) => c?.id).filter((id) => typeof id === "string" && id);
}

function partEditor(m, i, k) {
  const part = m.content[k];
  const remove = quietButton("✕", `Remove part ${k + 1} of message ${i + 1}`, () => {
    m.content.splice(k, 1);
    renderEditor();
    changed();
  }, "chat-part-remove");
  if (part && TEXT_PARTS.has(part.type)) {
    const text = el("textarea", { className: "chat-content chat-part-text", spellcheck: false, value: part.text ?? "",
                                  label: `Text part ${k + 1} of message ${i + 1}`,
                                  on: { input: (e) => { part.text = e.target.value; changed(); } } });
    return el("div", { className: "chat-part", dataset: { part: String(k), kind: "text" } }, text, remove);
  }
  if (part && IMAGE_PARTS.has(part.type)) {
    const nested = part.type === "image_url" && part.image_url && typeof part.image_url === "object";
    const detail = el("select", { className: "chat-detail", label: `Detail of image ${k + 1} of message ${i + 1}`,
                                  on: { change: (e) => {
                                    if (nested) part.image_url.detail = e.target.value;
                                    else part.detail = e.target.value;
                                    changed();
                                  } } }, ...DETAILS.map((d) => new Option(`detail ${d}`, d)));
    detail.value = (nested ? part.image_url.detail : part.detail) ?? "auto";
    const about = el("span", { className: "chat-image-about", textContent: "image" });
    return el("div", { className: "chat-part chat-image-part", dataset: { part: String(k), kind: "image" } },
              about, detail, remove);
  }
  const kind = part && typeof part === "object" ? JSON.stringify(part.type ?? null) : typeof part;
  return el("div", { className: "chat-part chat-other-part", dataset: { part: String(k), kind: "other" } },
            el("span", { className: "chat-image-about", textContent: `a ${kind} part` }), remove);
}

function toolCallsEditor(m, i) {
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  const box = el("div", { className: "chat-calls" });
  calls.forEach((call, k) => {
    call.function ??= {};
    const field = (cls, placeholder, value, set, tag = "input") => el(tag, {
      className: cls, placeholder, value: value ?? "", spellcheck: false,
      label: `${placeholder} of tool call ${k + 1} of message ${i + 1}`,
      on: { input: (e) => { set(e.target.value); changed(); } } });
    box.append(el("div", { className: "chat-call", dataset: { call: String(k) } },
      el("span", { className: "chat-call-label", textContent: "calls" }),
      field("chat-call-name", "function name", call.function.name, (v) => { call.function.name = v; }),
      field("chat-call-id", "call id", call.id, (v) => { call.id = v; }),
      field("chat-call-args", "arguments (JSON)", call.function.arguments, (v) => { call.function.arguments = v; }, "textarea"),
      quietButton("✕", `Remove tool call ${k + 1} of message ${i + 1}`, () => {
        calls.splice(k, 1);
        if (!calls.length) delete m.tool_calls;
        renderEditor();
        changed();
      }, "chat-call-remove")));
  });
  return box;
}

function addImages(m, files) {
  const images = [...files].filter((f) => /^image\//.test(f.type) || /\.(png|jpe?g|webp|gif)$/i.test(f.name));
  if (!images.length) {
    setState("error", "Drop or pick image files (PNG, JPEG, WebP, GIF) to add them to a message");
    return;
  }
  const read = (blob) => new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(r.result);
    r.onerror = () => reject(r.error);
    r.readAsDataURL(blob);
  });
  Promise.all(images.map(async (f) => {
    const type = f.type || "application/octet-stream";
    const part = { type: "image_url", image_url: { url: await read(f), detail: "auto" } };
    heads.set(part, f.size > HEAD_BYTES ? await read(f.slice(0, HEAD_BYTES, type)) : part.image_url.url);
    return part;
  })).then((parts) => {
    if (!Array.isArray(m.content)) m.content = m.content ? [{ type: "text", text: m.content }] : [];
    m.content.push(...parts);
    renderEditor();
    changed();
  }, (err) => setState("error", `Could not read the image: ${errorText(err)}`));
}

function renderEditor() {
  $("chat-messages").replaceChildren(...demo.messages.map((m, i) => {
    const row = el("div", { className: "chat-row" });
    row.dataset.index = String(i);
    const role = el("select", { className: "chat-role", label: `Role of message ${i + 1}` });
    for (const r of new Set([...ROLES, m.role])) role.append(new Option(r, r));
    role.value = m.role;
    role.addEventListener("change", () => { m.role = role.value; renderEditor(); changed(); });
    // An optional name (OpenAI chat: `name`, counted as gpt-tokenizer does; templates see it too).
    const name = el("input", { className: "chat-name", placeholder: "name (optional)", value: m.name ?? "",
                               label: `Name of message ${i + 1}`,
                               on: { input: (e) => { m.name = e.target.value; changed(); } } });
    const who = el("span", { className: "chat-who" }, role, name);
    const body = el("div", { className: "chat-body" });
    if (Array.isArray(m.content)) {
      m.content.forEach((_, k) => body.append(partEditor(m, i, k)));
    } else {
      body.append(el("textarea", { className: "chat-content", spellcheck: false, value: m.content ?? "",
                                   label: `Content of message ${i + 1}`,
                                   on: { input: (e) => { m.content = e.target.value; changed(); } } }));
    }
    if (m.role === "assistant" || Array.isArray(m.tool_calls)) body.append(toolCallsEditor(m, i));
    if (m.role === "tool" || m.tool_call_id !== undefined) {
      const list = el("datalist", { id: `chat-call-ids-${i}` }, ...callIds(i).map((id) => new Option(id, id)));
      const input = el("input", { className: "chat-tool-call-id", placeholder: "tool_call_id (the call it answers)",
                                  value: m.tool_call_id ?? "", label: `tool_call_id of message ${i + 1}`,
                                  on: { input: (e) => { m.tool_call_id = e.target.value; changed(); } } });
      input.setAttribute("list", list.id);
      body.append(el("label", { className: "chat-answers" }, "answers ", input, list));
    }
    const file = el("input", { type: "file", accept: "image/png,image/jpeg,image/webp,image/gif", multiple: true,
                               hidden: true, className: "chat-image-file",
                               on: { change: (e) => { addImages(m, e.target.files); e.target.value = ""; } } });
    const adds = el("div", { className: "chat-adds" },
      quietButton("+ image…", `Add an image to message ${i + 1} (or drop it on the message)`, () => file.click(), "chat-add-image"),
      file);
    if (Array.isArray(m.content)) {
      adds.prepend(quietButton("+ text", `Add a text part to message ${i + 1}`, () => {
        m.content.push({ type: "text", text: "" });
        renderEditor();
        changed();
      }, "chat-add-text"));
    }
    if (m.role === "assistant") {
      adds.append(quietButton("+ tool call", `Add a tool call to message ${i + 1}`, () => {
        const fn = demo.tools?.find((t) => t?.function?.name)?.function.name ?? "";
        const taken = new Set(callIds(demo.messages.length));
        let n = 1;
        while (taken.has(`call_${n}`)) n++;
        (m.tool_calls ??= []).push({ id: `call_${n}`, type: "function", function: { name: fn, arguments: "{}" } });
        renderEditor();
        changed();
      }, "chat-add-call"));
    }
    body.append(adds);
    const share = el("span", { className: "chat-share" });
    const buttons = el("span", { className: "chat-buttons" });
    for (const [label, title, action, off] of [
      ["↑", "Move up", () => move(i, -1), i === 0],
      ["↓", "Move down", () => move(i, 1), i === demo.messages.length - 1],
      ["✕", "Remove", () => { demo.messages.splice(i, 1); renderEditor(); changed(); }, false],
    ]) {
      const b = quietButton(label, `${title} message ${i + 1}`, action, `chat-${title.split(" ").pop().toLowerCase()}`);
      b.title = title;
      b.disabled = off;
      buttons.append(b);
    }
    row.append(who, body, share, buttons);
    return row;
  }));
  renderShares();
}

function move(i, by) {
  const [m] = demo.messages.splice(i, 1);
  demo.messages.splice(i + by, 0, m);
  renderEditor();
  changed();
}

// Each message's share, and on its parts what the count made of them (an image's size and
// tokens) or that they are not counted.
function renderShares() {
  const rows = $("chat-messages").children;
  const total = demo.total || 1;
  const report = demo.report;
  for (let i = 0; i < rows.length; i++) {
    const n = demo.shares[i];
    rows[i].querySelector(".chat-share").textContent =
      n === undefined ? "…" : `${fmt.format(n)} tokens · ${((100 * n) / total).toFixed(1)}%`;
    rows[i].querySelector(".chat-share").dataset.tokens = n === undefined ? "" : String(n);
    const left = new Map((report?.not_counted ?? []).filter((x) => x.where.startsWith(`messages[${i}].content[`))
      .map((x) => [Number(x.where.slice(`messages[${i}].content[`.length, -1)), x.why]));
    const images = report ? report.parts.filter((p) => p.part.startsWith(`message ${i + 1} (`) && p.part.includes(": image ")) : [];
    let next = 0;
    for (const chip of rows[i].querySelectorAll(".chat-image-part, .chat-other-part")) {
      const k = Number(chip.dataset.part);
      const about = chip.querySelector(".chat-image-about");
      const why = left.get(k);
      chip.classList.toggle("not-counted", why !== undefined);
      chip.title = why ?? "";
      if (chip.dataset.kind === "other") {
        about.textContent = `${about.textContent.replace(/ —.*/, "")}${why ? " — not counted" : ""}`;
      } else if (why !== undefined) {
        about.textContent = "image — not counted";
      } else if (report && images[next]) {
        const p = images[next++];
        about.textContent = `${p.part.split(": image ")[1].split(",")[0]} · ${fmt.format(p.tokens)} tokens`;
        chip.dataset.tokens = String(p.tokens);
      } else {
        about.textContent = "image";
      }
    }
  }
}

// --- counting -------------------------------------------------------------------------------

let timer = 0;
function changed() {
  demo.generation++;
  setState("busy", "Counting…");
  clearTimeout(timer);
  timer = setTimeout(recount, 120);
}

// The messages as a request has them: an empty name or tool_call_id left out (as the editor's
// empty field means), a dropped image sent as its header's bytes.
function requestMessages() {
  return demo.messages.map((m) => {
    const out = { ...m };
    if (!out.name) delete out.name;
    if (out.tool_call_id === "") delete out.tool_call_id;
    if (Array.isArray(out.content)) {
      out.content = out.content.map((p) => (heads.has(p) ? { ...p, image_url: { ...p.image_url, url: heads.get(p) } } : p));
    }
    return out;
  });
}

// The conversation's text as ChatML messages (what encodeChat renders: roles, names, text).
const textMessages = (messages) => messages.map(({ role, name, content }) =>
  (name ? { role, name, content: textOf(content) } : { role, content: textOf(content) }));

function breakdownText(report) {
  const sum = (test) => report.parts.filter((p) => test(p.part)).reduce((a, p) => a + p.tokens, 0);
  const images = report.parts.filter((p) => /^message \d+ \([^)]*\): image /.test(p.part));
  const pieces = [
    ["messages", sum((l) => /^message \d+ \([^)]*\)$/.test(l))],
    [`image${images.length === 1 ? "" : "s"} (${images.length})`, images.length ? sum((l) => images.some((p) => p.part === l)) : null],
    [report.parts.find((p) => p.part.startsWith("functions ("))?.part.replace("functions", "tool definitions") ?? "",
     report.parts.some((p) => p.part.startsWith("functions (")) ? sum((l) => l.startsWith("functions (")) : null],
    ["tool choice", report.parts.some((p) => p.part.startsWith("function_call")) ? sum((l) => l.startsWith("function_call")) : null],
    ["reply priming", sum((l) => l === "reply priming")],
  ];
  return pieces.filter(([, n]) => n !== null).map(([what, n]) => `${what} ${fmt.format(n)}`).join(" + ");
}

function renderNotCounted(items) {
  const list = $("chat-not-counted");
  list.replaceChildren(...items.map((x) => el("li", {}, el("code", { textContent: x.where }), `: ${x.why}`)));
  list.hidden = !items.length;
  $("chat-not-counted-head").hidden = !items.length;
  $("chat-not-counted-head").textContent = `Not counted (${items.length}) — the total leaves ${items.length === 1 ? "it" : "them"} out:`;
}

async function recount() {
  const generation = demo.generation;
  try {
    const model = demo.model;
    const template = templated();
    const tok = template ? template.tok : await tokenizer(MODELS[model]);
    const messages = requestMessages();
    const tools = demo.tools ?? undefined;
    let shares, ids, blocks;
    let requestTotal = null;
    let report = null;
    let lead = null; // the harmony system message's share
    let notCounted = [];
    if (template) {
      for (const key of Object.keys(demo.extra)) {
        if (key !== "model") notCounted.push({ where: key, why: "a request field a chat template is not given" });
      }
      shares = await tok.applyChatTemplate(messages, { perMessage: true, tools });
      ids = await tok.applyChatTemplate(messages, { addGenerationPrompt: true, tools });
      blocks = shares;
    } else if (harmony()) {
      // gpt-oss: harmony's system message (reasoning effort, date) first, when an effort is set.
      const system = demo.effort ? [{ role: "system", content: [{ type: "system_content",
        reasoning_effort: demo.effort, ...(demo.date ? { conversation_start_date: demo.date } : {}) }] }] : [];
      const plain = messages.map(({ role, name, content }) => (name ? { role, name, content } : { role, content }));
      messages.forEach((m, i) => {
        for (const key of Object.keys(m)) {
          if (!["role", "name", "content"].includes(key)) notCounted.push({ where: `messages[${i}].${key}`, why: "not rendered for gpt-oss here (harmony's tool calls are messages with a recipient)" });
        }
      });
      for (const key of Object.keys(demo.extra)) {
        if (key !== "model") notCounted.push({ where: key, why: "not counted for gpt-oss here" });
      }
      if (tools) notCounted.push({ where: "tools", why: "not counted for gpt-oss here (harmony puts tools in a developer message)" });
      const convo = [...system, ...plain];
      shares = await tok.countChat(convo, { model, perMessage: true });
      ids = await tok.encodeChat({ messages: convo }, { model });
      if (system.length) [lead, ...shares] = shares;
      blocks = lead === null ? shares : [lead, ...shares];
    } else {
      // OpenAI: the request as billed (tools, tool calls, images), and its text as ChatML tokens.
      const request = { ...demo.extra, messages, ...(tools ? { tools } : {}) };
      report = await tok.countChat(request, { model, report: true });
      notCounted = report.not_counted;
      const text = textMessages(messages);
      blocks = await tok.countChat(text, { model, perMessage: true });
      ids = await tok.encodeChat(text, { model });
      shares = messages.map((_, i) => report.parts.filter((p) => p.part.startsWith(`message ${i + 1} (`))
        .reduce((a, p) => a + p.tokens, 0));
      shares.push(report.parts.find((p) => p.part === "reply priming")?.tokens ?? 0);
      if (tools) requestTotal = report.tokens;
    }
    const named = template ? {} : CHAT_SPECIALS[MODELS[model]] ?? {};
    const texts = await Promise.all(ids.map((id) => named[id] ?? tok.decode([id])));
    if (generation !== demo.generation) return; // an edit overtook this count
    const total = report ? report.tokens : shares.reduce((a, b) => a + b, lead ?? 0);
    Object.assign(demo, { tok, shares, ids, requestTotal, total, report, systemShare: lead });
    $("chat-harmony").hidden = !harmony();
    $("chat-system-share").dataset.tokens = lead === null ? "" : String(lead);
    $("chat-system-share").textContent = lead === null ? "" : `system message: ${fmt.format(lead)} tokens`;
    const request = $("chat-request");
    request.dataset.tokens = requestTotal === null ? "" : String(requestTotal);
    const nTools = demo.tools ? `${demo.tools.length} tool${demo.tools.length === 1 ? "" : "s"}` : "";
    const defs = report?.parts.find((p) => p.part.startsWith("functions ("));
    request.textContent = !demo.tools ? "no tools"
      : template ? `${nTools} given to the template`
      : harmony() ? "not counted for gpt-oss here"
      : `${nTools}: ${defs ? `${fmt.format(defs.tokens)} tokens of definitions, ` : ""}in the total of ${fmt.format(requestTotal)}`;
    $("chat-total").textContent = fmt.format(demo.total);
    $("chat-which").textContent = template ? `${template.label} · its chat template (jinja2)`
      : harmony() ? `${model} · ${MODELS[model]} · harmony format`
      : `${model} · ${MODELS[model]} · billed as a Chat Completions request`;
    $("chat-breakdown").textContent = report ? `= ${breakdownText(report)}`
      : lead !== null ? `= system message ${fmt.format(lead)} + messages + reply priming` : "";
    renderNotCounted(notCounted);
    const prime = shares[shares.length - 1];
    $("chat-prime").textContent = `${fmt.format(prime)} tokens prime the reply${template ? " (the generation prompt)" : ""}`;
    $("chat-prime").dataset.tokens = String(prime);
    renderShares();
    renderPrompt(ids, texts, blocks, lead === null ? 0 : 1, report);
    setState("ready", notCounted.length ? `${notCounted.length} part${notCounted.length === 1 ? " is" : "s are"} not counted: see below the total` : "");
  } catch (err) {
    if (generation !== demo.generation) return;
    demo.total = null;
    demo.report = null;
    $("chat-total").textContent = "–";
    $("chat-breakdown").textContent = "";
    renderNotCounted([]);
    $("chat-tokens").classList.add("stale");
    setState("error", errorText(err));
  }
}

// The rendered prompt: each token coloured as in the Count view, special tokens marked, each
// message's tokens in a block of their own (the last block is the reply prime); a message's
// images, which have no ids, as a mark with their tokens.
function renderPrompt(ids, texts, shares, lead = 0, report = null) {
  const special = new Set([...demo.tok.specialTokens, ...Object.values(CHAT_SPECIALS[demo.tok.name] ?? {})]);
  const blocks = [];
  let at = 0;
  shares.forEach((n, m) => {
    const block = document.createElement("div");
    block.className = "chat-block";
    block.dataset.message = m < lead ? "system" : m < shares.length - 1 ? String(m - lead) : "prime";
    for (let k = at; k < at + n; k++) {
      const span = document.createElement("span");
      span.className = `t c${k % 6}${special.has(texts[k]) ? " special" : ""}`;
      span.textContent = texts[k].replace(/\n/g, "↵\n");
      span.title = `id ${ids[k]}: ${JSON.stringify(texts[k])}`;
      span.dataset.id = String(ids[k]);
      block.append(span);
    }
    for (const p of report?.parts ?? []) {
      if (p.part.startsWith(`message ${m - lead + 1} (`) && p.part.includes(": image ")) {
        block.append(el("span", { className: "chat-image-mark", textContent: `[${p.part.split(": ")[1]}: ${fmt.format(p.tokens)} tokens]` }));
      }
    }
    at += n;
    blocks.push(block);
  });
  $("chat-tokens").classList.remove("stale");
  $("chat-tokens").replaceChildren(...blocks);
}

// --- setup ----------------------------------------------------------------------------------

/**
 * Replace the conversation (what pasting one does): an array of messages, each kept whole — a
 * content string or content-part array, name, tool_calls, tool_call_id, and any other field
 * (sent with the request: the count says what it leaves out).
 */
demo.setMessages = (messages) => {
  messages.forEach((m, i) => {
    if (!m || typeof m !== "object" || Array.isArray(m)) throw new Error(`message ${i + 1} is not an object`);
    if (typeof m.role !== "string") throw new Error(`message ${i + 1} has no role`);
    const c = m.content;
    if (c !== undefined && c !== null && typeof c !== "string" && !Array.isArray(c)) {
      throw new Error(`message ${i + 1}'s content is neither a string nor an array of content parts`);
    }
  });
  demo.messages = messages.map((m) => {
    const copy = structuredClone(m);
    if (copy.content === undefined) copy.content = "";
    return copy;
  });
  renderEditor();
  changed();
};

// The model's name from its files: config.json's _name_or_path or architecture, a config's
// name_or_path, the folder's name, the tokenizer class, or the template's own markers.
async function modelName(byName, config, json) {
  const cfg = byName.get("config.json");
  if (cfg) {
    try {
      const c = JSON.parse(await cfg.text());
      const name = c._name_or_path || c.name_or_path || c.architectures?.[0] || c.model_type;
      if (typeof name === "string" && name) return name;
    } catch {
      // an unreadable config.json names nothing
    }
  }
  const named = config.name_or_path || config._name_or_path;
  if (typeof named === "string" && named) return named;
  const folder = json.webkitRelativePath?.split("/").slice(-2, -1)[0];
  if (folder) return folder;
  const cls = typeof config.tokenizer_class === "string" ? config.tokenizer_class.replace(/TokenizerFast$|Tokenizer$/, "") : "";
  if (cls && cls !== "PreTrained") return `${cls} tokenizer`;
  const template = typeof config.chat_template === "string" ? config.chat_template
    : JSON.stringify(config.chat_template ?? "");
  for (const [mark, family] of [["<|start_header_id|>", "Llama 3"], ["<start_of_turn>", "Gemma"],
                                ["<｜User｜>", "DeepSeek"], ["<|im_start|>", "ChatML (Qwen-style)"],
                                ["[INST]", "Mistral / Llama 2"]]) {
    if (template.includes(mark)) return `${family} template`;
  }
  return "tokenizer.json";
}

// A Hugging Face tokenizer with its chat template: tokenizer.json and tokenizer_config.json
// (and a chat_template.jinja, which newer models keep beside the config; a config.json names
// the model), picked as files or as their folder; it becomes an entry of the model list.
async function openTemplate(files) {
  const byName = new Map([...files].map((f) => [f.name, f]));
  const json = byName.get("tokenizer.json");
  const cfg = byName.get("tokenizer_config.json");
  if (!json || !cfg) {
    setState("error", "Open a tokenizer.json with its tokenizer_config.json (both files, or their folder)");
    return;
  }
  demo.generation++;
  setState("busy", `Loading ${json.webkitRelativePath || json.name}…`);
  try {
    let config = JSON.parse(await cfg.text());
    const jinja = byName.get("chat_template.jinja");
    if (jinja && config.chat_template === undefined) config = { ...config, chat_template: await jinja.text() };
    const tok = await AnyTok.load({ file: json, config });
    if (!tok.hasChatTemplate) throw new Error("its tokenizer_config.json has no chat_template");
    const label = await modelName(byName, config, json);
    const value = `template:${templates.size + 1}`;
    templates.set(value, { tok, label });
    $("chat-model").append(new Option(`${label} · chat template`, value));
    $("chat-model").value = demo.model = value;
    renderEditor();
    changed();
  } catch (err) {
    setState("error", `Could not use this chat template: ${errorText(err)}`);
  }
}

// Paste JSON: a messages array, or a whole Chat Completions request (its tools go to the Tools
// field; its other fields are kept and sent with it: counted, or said not to be).
function pasteJSON() {
  try {
    const value = JSON.parse($("chat-json").value);
    if (value && !Array.isArray(value) && typeof value === "object" && !("messages" in value) && "input" in value) {
      throw new Error("this is a Responses API request (input): paste its messages as a Chat Completions "
        + "request here; natively, anytok.chat.count_request counts it as it is");
    }
    const messages = Array.isArray(value) ? value : value?.messages;
    if (!Array.isArray(messages)) throw new Error("expected a messages array or a request {\"messages\": [...], ...}");
    const { messages: _, tools, ...extra } = Array.isArray(value) ? {} : value;
    if (tools !== undefined && !(Array.isArray(tools) && tools.every((t) => t && typeof t === "object"))) {
      throw new Error("its tools must be an array of tool objects");
    }
    demo.extra = extra;
    demo.tools = tools?.length ? tools : null;
    $("chat-tools").value = demo.tools ? JSON.stringify(demo.tools, null, 1) : "";
    if (demo.tools) $("chat-tools").closest("details").open = true;
    demo.setMessages(messages);
    $("chat-json-row").hidden = true;
  } catch (err) {
    demo.generation++;
    setState("error", `Not a conversation: ${errorText(err)}`);
  }
}

// Images dropped on a message go into it; dropped elsewhere on the Chat view, into a new user
// message.  (The page's own drop, which opens a text file in the Count view, is told to keep out.)
function wireImageDrop() {
  const overlay = $("drop-overlay");
  const inView = () => !$("chat-view").hidden;
  const hasFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes("Files");
  window.addEventListener("dragover", (e) => {
    if (!inView() || !hasFiles(e)) return;
    setTimeout(() => { if (overlay && !overlay.hidden) overlay.firstElementChild.textContent = "Drop images to add them to this chat"; });
  }, { capture: true });
  window.addEventListener("drop", (e) => {
    if (!inView() || !e.dataTransfer?.files?.length) return;
    e.preventDefault();
    const under = document.elementsFromPoint(e.clientX, e.clientY);
    const row = under.map((x) => x.closest?.(".chat-row")).find(Boolean);
    let m = row ? demo.messages[Number(row.dataset.index)] : null;
    if (!m) {
      m = { role: "user", content: [] };
      demo.messages.push(m);
    }
    addImages(m, e.dataTransfer.files);
  }, { capture: true });
}

// The breakdown under the total and the list of what is not counted (made here: the Chat
// view's own parts of the result card).
function resultParts() {
  const head = $("chat-total").closest(".tokens-head") ?? $("chat-total").parentElement;
  const breakdown = el("p", { id: "chat-breakdown", className: "note chat-breakdown" });
  const notHead = el("p", { id: "chat-not-counted-head", className: "chat-not-counted-head", hidden: true });
  const list = el("ul", { id: "chat-not-counted", className: "chat-not-counted", hidden: true });
  head.after(breakdown, notHead, list);
}

function start() {
  const select = $("chat-model");
  for (const model of Object.keys(MODELS)) select.append(new Option(`${model} (${MODELS[model]})`, model));
  select.value = demo.model;
  select.addEventListener("change", () => { demo.model = select.value; renderEditor(); changed(); });
  $("chat-add").addEventListener("click", () => {
    const last = demo.messages[demo.messages.length - 1]?.role;
    demo.messages.push({ role: last === "user" ? "assistant" : "user", content: "" });
    renderEditor();
    changed();
    $("chat-messages").lastElementChild?.querySelector("textarea").focus();
  });
  $("chat-paste").addEventListener("click", () => {
    const whole = demo.tools || Object.keys(demo.extra).length;
    $("chat-json").value = JSON.stringify(whole ? { ...demo.extra, messages: demo.messages, ...(demo.tools ? { tools: demo.tools } : {}) }
      : demo.messages, null, 1);
    $("chat-json-row").hidden = !$("chat-json-row").hidden;
  });
  $("chat-json-apply").addEventListener("click", pasteJSON);
  $("chat-effort").addEventListener("change", () => { demo.effort = $("chat-effort").value; changed(); });
  $("chat-date").addEventListener("input", () => { demo.date = $("chat-date").value.trim(); changed(); });
  $("chat-tools").addEventListener("input", () => {
    const text = $("chat-tools").value.trim();
    try {
      const tools = text ? JSON.parse(text) : null;
      if (tools !== null && !(Array.isArray(tools) && tools.every((t) => t && typeof t === "object"))) {
        throw new Error("expected an array of tool objects");
      }
      demo.tools = tools && tools.length ? tools : null;
      changed();
    } catch (err) {
      demo.generation++;
      setState("error", `Tools: ${errorText(err)}`);
    }
  });
  $("chat-open-template").addEventListener("click", () => $("chat-template-files").click());
  $("chat-open-folder").addEventListener("click", () => $("chat-template-folder").click());
  for (const id of ["chat-template-files", "chat-template-folder"]) {
    $(id).addEventListener("change", () => { openTemplate($(id).files); $(id).value = ""; });
  }
  resultParts();
  wireImageDrop();
  renderEditor();
  setState("idle", "");
  // Counted when the view is first shown, so that the other views do not load these encodings.
  const shown = () => { if (!$("chat-view").hidden && demo.state === "idle") changed(); };
  new MutationObserver(shown).observe($("chat-view"), { attributes: true, attributeFilter: ["hidden"] });
  shown();
}

start();
