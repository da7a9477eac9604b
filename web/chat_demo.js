// The demo page's Chat view: edit a conversation (each message a role and a content; add,
// remove, move), pick a model, and see the tokens the model is given for it: the total, each
// message's share (the last share is the reply prime) and the rendered prompt as coloured
// tokens.  Only the public shim: tok.countChat (perMessage), tok.encodeChat, tok.decode; for a
// Hugging Face tokenizer opened with its tokenizer_config.json (files or a folder), its chat
// template: tok.applyChatTemplate (perMessage; the ids with the generation prompt).
//
// Every edit marks the view busy at once and recounts a moment later; a count that an edit
// overtook is dropped, so what is shown (and data-state=ready) is always the current messages'.

import { AnyTok } from "./anytok.js";

const $ = (id) => document.getElementById(id);
const fmt = new Intl.NumberFormat("en");

// The model list: OpenAI chat models (gpt-tokenizer's encodeChat) and gpt-oss (harmony).
const MODELS = {
  "gpt-4o": "o200k_base",
  "gpt-4.1": "o200k_base",
  "gpt-4": "cl100k_base",
  "gpt-3.5-turbo": "cl100k_base",
  "gpt-oss-120b": "o200k_harmony",
};
const ROLES = ["system", "developer", "user", "assistant"];
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

function renderEditor() {
  $("chat-messages").replaceChildren(...demo.messages.map((m, i) => {
    const row = document.createElement("div");
    row.className = "chat-row";
    row.dataset.index = String(i);
    const role = document.createElement("select");
    role.className = "chat-role";
    role.setAttribute("aria-label", `Role of message ${i + 1}`);
    for (const r of new Set([...ROLES, m.role])) role.append(new Option(r, r));
    role.value = m.role;
    role.addEventListener("change", () => { m.role = role.value; changed(); });
    // An optional name (OpenAI chat: `name`, counted as gpt-tokenizer does; templates see it too).
    const name = document.createElement("input");
    name.className = "chat-name";
    name.placeholder = "name (optional)";
    name.value = m.name ?? "";
    name.setAttribute("aria-label", `Name of message ${i + 1}`);
    name.addEventListener("input", () => { m.name = name.value; changed(); });
    const who = document.createElement("span");
    who.className = "chat-who";
    who.append(role, name);
    const content = document.createElement("textarea");
    content.className = "chat-content";
    content.spellcheck = false;
    content.value = m.content;
    content.setAttribute("aria-label", `Content of message ${i + 1}`);
    content.addEventListener("input", () => { m.content = content.value; changed(); });
    const share = document.createElement("span");
    share.className = "chat-share";
    const buttons = document.createElement("span");
    buttons.className = "chat-buttons";
    for (const [label, title, action, off] of [
      ["↑", "Move up", () => move(i, -1), i === 0],
      ["↓", "Move down", () => move(i, 1), i === demo.messages.length - 1],
      ["✕", "Remove", () => { demo.messages.splice(i, 1); renderEditor(); changed(); }, false],
    ]) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = `quiet chat-${title.split(" ").pop().toLowerCase()}`;
      b.textContent = label;
      b.title = title;
      b.disabled = off;
      b.addEventListener("click", action);
      buttons.append(b);
    }
    row.append(who, content, share, buttons);
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

function renderShares() {
  const rows = $("chat-messages").children;
  const total = demo.total || 1;
  for (let i = 0; i < rows.length; i++) {
    const n = demo.shares[i];
    rows[i].querySelector(".chat-share").textContent =
      n === undefined ? "…" : `${fmt.format(n)} tokens · ${((100 * n) / total).toFixed(1)}%`;
    rows[i].querySelector(".chat-share").dataset.tokens = n === undefined ? "" : String(n);
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

async function recount() {
  const generation = demo.generation;
  try {
    const model = demo.model;
    const template = templated();
    const tok = template ? template.tok : await tokenizer(MODELS[model]);
    const messages = demo.messages.map(({ role, content, name }) => (name ? { role, name, content } : { role, content }));
    const tools = demo.tools ?? undefined;
    let shares, ids;
    let requestTotal = null;
    let lead = null; // the harmony system message's share
    if (template) {
      shares = await tok.applyChatTemplate(messages, { perMessage: true, tools });
      ids = await tok.applyChatTemplate(messages, { addGenerationPrompt: true, tools });
    } else {
      // gpt-oss: harmony's system message (reasoning effort, date) first, when an effort is set.
      const system = harmony() && demo.effort ? [{ role: "system", content: [{ type: "system_content",
        reasoning_effort: demo.effort, ...(demo.date ? { conversation_start_date: demo.date } : {}) }] }] : [];
      const convo = [...system, ...messages];
      shares = await tok.countChat(convo, { model, perMessage: true });
      ids = await tok.encodeChat(harmony() ? { messages: convo } : convo, { model });
      if (tools && !harmony()) requestTotal = await tok.countChat({ messages, tools }, { model });
      if (system.length) [lead, ...shares] = shares;
    }
    const named = template ? {} : CHAT_SPECIALS[MODELS[model]] ?? {};
    const texts = await Promise.all(ids.map((id) => named[id] ?? tok.decode([id])));
    if (generation !== demo.generation) return; // an edit overtook this count
    const total = shares.reduce((a, b) => a + b, lead ?? 0);
    Object.assign(demo, { tok, shares, ids, requestTotal, total, systemShare: lead });
    $("chat-harmony").hidden = !harmony();
    $("chat-system-share").dataset.tokens = lead === null ? "" : String(lead);
    $("chat-system-share").textContent = lead === null ? "" : `system message: ${fmt.format(lead)} tokens`;
    const request = $("chat-request");
    request.dataset.tokens = requestTotal === null ? "" : String(requestTotal);
    const nTools = demo.tools ? `${demo.tools.length} tool${demo.tools.length === 1 ? "" : "s"}` : "";
    request.textContent = !demo.tools ? "no tools"
      : template ? `${nTools} given to the template`
      : harmony() ? "not counted for gpt-oss here"
      : `as a request with ${nTools}: ${fmt.format(requestTotal)} tokens`;
    $("chat-total").textContent = fmt.format(demo.total);
    $("chat-which").textContent = template ? `${template.label} · its chat template (jinja2)`
      : `${model} · ${MODELS[model]}${harmony() ? " · harmony format" : ""}`;
    $("chat-prime").textContent = `${fmt.format(shares[shares.length - 1])} tokens prime the reply${template ? " (the generation prompt)" : ""}`;
    $("chat-prime").dataset.tokens = String(shares[shares.length - 1]);
    renderShares();
    renderPrompt(ids, texts, lead === null ? shares : [lead, ...shares], lead === null ? 0 : 1);
    setState("ready");
  } catch (err) {
    if (generation !== demo.generation) return;
    demo.total = null;
    $("chat-total").textContent = "–";
    setState("error", errorText(err));
  }
}

// The rendered prompt: each token coloured as in the Count view, special tokens marked, each
// message's tokens in a block of their own (the last block is the reply prime).
function renderPrompt(ids, texts, shares, lead = 0) {
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
    at += n;
    blocks.push(block);
  });
  $("chat-tokens").replaceChildren(...blocks);
}

// --- setup ----------------------------------------------------------------------------------

/** Replace the conversation (what pasting one does): an array of {role, content}. */
demo.setMessages = (messages) => {
  demo.messages = messages.map((m) => ({ role: String(m.role), content: String(m.content ?? ""),
                                          ...(m.name ? { name: String(m.name) } : {}) }));
  renderEditor();
  changed();
};

// A Hugging Face tokenizer with its chat template: tokenizer.json and tokenizer_config.json
// (and a chat_template.jinja, which newer models keep beside the config), picked as files or
// as their folder; it becomes an entry of the model list.
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
    const label = json.webkitRelativePath?.split("/").slice(-2, -1)[0] || tok.name || "tokenizer.json";
    const value = `template:${templates.size + 1}`;
    templates.set(value, { tok, label });
    $("chat-model").append(new Option(`${label} (chat template)`, value));
    $("chat-model").value = demo.model = value;
    renderEditor();
    changed();
  } catch (err) {
    setState("error", `Could not use this chat template: ${errorText(err)}`);
  }
}

function pasteJSON() {
  try {
    const value = JSON.parse($("chat-json").value);
    const messages = Array.isArray(value) ? value : value?.messages;
    if (!Array.isArray(messages)) throw new Error("expected a messages array or {\"messages\": [...]}");
    demo.setMessages(messages);
    $("chat-json-row").hidden = true;
  } catch (err) {
    setState("error", `Not a conversation: ${errorText(err)}`);
  }
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
    $("chat-json").value = JSON.stringify(demo.messages, null, 1);
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
  renderEditor();
  setState("idle", "");
  // Counted when the view is first shown, so that the other views do not load these encodings.
  const shown = () => { if (!$("chat-view").hidden && demo.state === "idle") changed(); };
  new MutationObserver(shown).observe($("chat-view"), { attributes: true, attributeFilter: ["hidden"] });
  shown();
}

start();
