// The demo page's Constrain view: type (or pick an example of) a regex, a JSON Schema, a Lark
// grammar or a llama.cpp GBNF grammar, then step
// through a generation by clicking allowed tokens (or "Random allowed token", which prefers
// tokens that are not whitespace only, as the list shows them first), seeing how many tokens the
// mask allows and the time each step took.  The allowed tokens can be searched by text or id.
// Only the public shim: tok.constrain.

import { AnyTok } from "./anytok.js";
import { markText, tokenLabel } from "./visible.js";

const $ = (id) => document.getElementById(id);
const fmt = new Intl.NumberFormat("en");
const SHOWN = 300; // allowed tokens listed as buttons
const SEARCH_CHUNK = 4096; // allowed tokens decoded between two looks at the search box

const EXAMPLES = {
  regex: "(yes|no), because [a-z ]{1,40}\\.",
  jsonSchema: JSON.stringify({
    type: "object",
    properties: {
      name: { type: "string", maxLength: 20 },
      age: { type: "integer", minimum: 0, maximum: 150 },
      tags: { type: "array", items: { enum: ["a", "b", "c"] }, maxItems: 3 },
    },
    required: ["name", "age"],
    additionalProperties: false,
  }, null, 2),
  grammar: 'start: "(" item ("," item)* ")"\nitem: /[a-z]{1,6}/ | NUMBER\n%import common.NUMBER',
  gbnf: 'root ::= "The answer is " answer "."\nanswer ::= ("yes" | "no") (", because " [a-z ]{1,30})?',
};

// The Example list: one per kind, a few more grammars of our own, then llama.cpp's example
// grammars when the build found them (examples/llama_cpp_grammars.json, from the
// llama-cpp-python sdist that build_scripts/fetch/fetch_llama_cpp.py caches).
const MORE = [
  ["Lark: tool call with special tokens", "grammar",
    'start: TEXT | call\nTEXT: /[^{<](.|\\n){0,80}/\ncall: <|endofprompt|> %json {"type": "object", "properties": '
    + '{"city": {"type": "string", "maxLength": 20}}, "required": ["city"]} <|endoftext|>'],
  ["Lark: thinking, then an answer (stop=)", "grammar",
    'start: think answer\nthink[stop="</think>"]: /[a-z ,.]*/\nanswer: "Answer: " /[0-9]{1,4}/'],
  ["Lark: arithmetic (left recursion)", "grammar",
    '?start: sum\n?sum: product | sum "+" product | sum "-" product\n?product: atom | product "*" atom\n'
    + '?atom: NUMBER | "(" sum ")"\n%import common.NUMBER\n%ignore " "'],
];
const examples = [
  ["Regex", "regex", EXAMPLES.regex],
  ["JSON Schema", "jsonSchema", EXAMPLES.jsonSchema],
  ["Lark grammar", "grammar", EXAMPLES.grammar],
  ["GBNF", "gbnf", EXAMPLES.gbnf],
  ...MORE,
];

function fillExamples() {
  const select = $("constrain-example");
  select.replaceChildren(...examples.map(([label], i) => new Option(label, String(i))));
  select.value = String(examples.findIndex(([, kind]) => kind === $("constrain-kind").value));
}

async function addLlamaCppExamples() {
  try {
    const res = await fetch("examples/llama_cpp_grammars.json");
    if (!res.ok) return;
    const grammars = await res.json();
    const chosen = $("constrain-example").value;
    for (const [name, text] of Object.entries(grammars)) examples.push([`llama.cpp: ${name}.gbnf`, "gbnf", text]);
    fillExamples();
    $("constrain-example").value = chosen;
  } catch {
    // (a build without the llama-cpp-python sdist: our own examples only)
  }
}

const demo = {
  tok: null,
  toks: new Map(), // encoding name -> Promise of its tokenizer
  matcher: null,
  tokens: [], // consumed ids
  texts: [], // their text
  allowed: [],
  finished: false, // end of sequence consumed
  state: "idle", // idle, starting, ready, busy, error
  lastMs: 0,
  constrained: new Set(), // tokenizers this page made a matcher for (their token trie is made)
};
window.anytokConstrainDemo = demo;

function setState(state, message = "") {
  demo.state = state;
  $("constrain-view").dataset.state = state;
  $("constrain-message").textContent = message;
  $("constrain-message").className = `train-message ${state === "error" ? "bad" : ""}`;
  const busy = state === "starting" || state === "busy";
  for (const id of ["constrain-start", "constrain-random", "constrain-undo", "constrain-restart"]) $(id).disabled = busy;
  // A step inside a long string can take seconds: say so while it runs.
  $("constrain-busy").hidden = !busy;
  $("constrain-run").setAttribute("aria-busy", String(busy));
  if (!busy) $("constrain-random").disabled = demo.finished || demo.allowed.length === 0;
}

function errorText(err) {
  return err?.pythonType ? `${err.pythonType}: ${err.message}` : err?.message ?? String(err);
}

// Whitespace made visible as in every view (visible.js), compactly: a run of more than three of
// the same is written once with its length ("·×12").
const shown = (text) => markText(text, 3);
window.anytokConstrainShown = shown; // (for the tests)

// A token makes progress when its text is not whitespace only (the end of sequence does too):
// the random choice and the list prefer those, so that a walk through a JSON Schema writes the
// object instead of the indentation the schema also allows.
const tokenTexts = new Map(); // id -> its label, for the current tokenizer

// Tokens' labels from their own bytes (tok.tokenBytes: the bytes the constraint matches, for
// every kind of tokenizer): the text they spell, marked as the Count view marks it, or for a
// token holding part of a character the bytes it holds (<0xE5><0xBE>), as the Count view shows
// it; a special token its name.  One worker call for all the ids not labelled yet.
async function textsOf(ids) {
  const tok = demo.tok;
  const missing = [...new Set(ids)].filter((id) => !tokenTexts.has(id));
  const got = new Map();
  if (missing.length) {
    const parts = await tok.tokenBytes(missing);
    missing.forEach((id, i) => got.set(id, typeof parts[i] === "string" ? parts[i] : tokenLabel(parts[i])));
    if (tok === demo.tok) for (const [id, text] of got) tokenTexts.set(id, text);
  }
  return ids.map((id) => got.get(id) ?? tokenTexts.get(id));
}
const textOf = async (id) => (await textsOf([id]))[0];

const progresses = (text) => demo.special.has(text) || /\S/.test(text);

// Up to `limit` allowed tokens for the list: those that make progress, in id order, then the
// whitespace-only ones; and whether any token makes progress.
async function listed(allowed, limit) {
  const ahead = [];
  const behind = [];
  const CHUNK = 2048;
  for (let at = 0; at < allowed.length && ahead.length < limit; at += CHUNK) {
    const ids = allowed.slice(at, at + CHUNK);
    const texts = await textsOf(Array.from(ids));
    ids.forEach((id, i) => (progresses(texts[i]) ? ahead : behind).push(id));
  }
  return { ids: [...ahead, ...behind].slice(0, limit), progress: ahead.length > 0 };
}

// A random allowed token, uniform among those that make progress (whitespace-only tokens only
// when nothing else is allowed).
async function randomToken(allowed) {
  const pick = (ids) => ids[Math.floor(Math.random() * ids.length)];
  const draws = Array.from({ length: Math.min(64, allowed.length) }, () => pick(allowed));
  const drawn = await textsOf(draws); // most masks: a few draws find one
  const hit = draws.find((_, i) => progresses(drawn[i]));
  if (hit !== undefined) return hit;
  const texts = await textsOf(Array.from(allowed));
  const ahead = Array.from(allowed).filter((_, i) => progresses(texts[i]));
  return pick(ahead.length ? ahead : allowed);
}

async function refresh() {
  const m = demo.matcher;
  const t0 = performance.now();
  const mask = await m.mask();
  demo.lastMs = performance.now() - t0;
  let n = 0;
  for (const w of mask) {
    let x = w;
    while (x) {
      x &= x - 1;
      n++;
    }
  }
  // Special tokens a mask allows: the end of sequence where the output is complete (once it is
  // taken, the generation is over), and those a grammar names (`<|name|>`, `<[id]>`).
  demo.allowed = demo.finished ? [] : await m.allowed();
  const [accepting, stopped] = [await m.isAccepting(), await m.isStopped()];
  const allowedText = n === 1 ? "1 token allowed" : `${fmt.format(n)} tokens allowed`;
  $("constrain-stats").textContent = demo.finished
    ? `step ${demo.tokens.length} · finished (end of sequence taken)`
    : `step ${demo.tokens.length} · ${allowedText} · mask ${demo.lastMs.toFixed(1)} ms`
      + (accepting ? " · complete (end of sequence allowed)" : "") + (stopped ? " · stopped" : "");
  demo.accepting = accepting;
  const out = $("constrain-output");
  out.replaceChildren(...demo.texts.map((text, i) => {
    const span = document.createElement("span");
    span.className = `t c${i % 6}`;
    span.textContent = demo.finished && i === demo.texts.length - 1 ? text : shown(text);
    span.dataset.text = text;
    span.title = `id ${demo.tokens[i]}: ${JSON.stringify(text)}`;
    return span;
  }));
  await renderAllowed();
  $("constrain-random").disabled = demo.finished || demo.allowed.length === 0;
}

// The allowed-token list: those matching the search box (text or id), progress-making first,
// up to SHOWN of them.
let listing = 0;
async function renderAllowed() {
  const run = ++listing;
  const query = $("constrain-filter").value;
  let ids;
  let matched = null;
  if (!query) {
    ({ ids } = await listed(demo.allowed, SHOWN));
  } else {
    const found = [];
    let total = 0;
    const asId = /^\d+$/.test(query.trim()) ? query.trim() : null;
    for (let at = 0; at < demo.allowed.length; at += SEARCH_CHUNK) {
      const chunk = Array.from(demo.allowed.slice(at, at + SEARCH_CHUNK));
      const texts = await textsOf(chunk);
      if (run !== listing) return;
      chunk.forEach((id, i) => {
        const hit = (asId !== null && String(id).startsWith(asId)) || texts[i].includes(query) || shown(texts[i]).includes(query);
        if (hit) {
          total++;
          if (found.length < SHOWN) found.push(id);
        }
      });
    }
    ids = found;
    matched = total;
  }
  if (run !== listing) return;
  const texts = await textsOf(Array.from(ids));
  if (run !== listing) return;
  $("constrain-allowed").replaceChildren(...ids.map((id, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "quiet";
    b.textContent = !demo.special.has(texts[i]) ? shown(texts[i]) : demo.accepting ? "⟨end⟩" : texts[i];
    b.title = `id ${id}`;
    b.dataset.id = String(id);
    b.addEventListener("click", () => step(id));
    return b;
  }));
  const n = demo.allowed.length;
  $("constrain-list-note").textContent = demo.finished
    ? "The generation is finished: Undo the end, or Restart."
    : matched !== null
      ? `${fmt.format(matched)} of ${fmt.format(n)} allowed tokens match${matched > SHOWN ? ` (the first ${SHOWN} shown)` : ""}; click one:`
      : `Allowed tokens, click one${n > SHOWN ? ` (${SHOWN} of ${fmt.format(n)} shown; search to find others)` : ""}:`;
  $("constrain-view").dataset.listed = String(run);
}

async function begin() {
  setState("starting", "Compiling the constraint…");
  try {
    const name = $("constrain-encoding").value;
    // A tokenizer file opened in the Count view: its tokenizer, as loaded there.
    const file = name.startsWith("file:") ? window.anytokDemo?.state?.tokenizers?.get(name) : null;
    if (file) {
      demo.toks.set(name, file);
    } else if (name.startsWith("file:")) {
      throw new Error(`the tokenizer file ${name.slice(5)} is not loaded`);
    } else if (!demo.toks.has(name)) {
      const loading = AnyTok.load({ encoding: name });
      demo.toks.set(name, loading);
      loading.catch(() => demo.toks.delete(name));
    }
    const tok = await demo.toks.get(name);
    if (tok !== demo.tok) tokenTexts.clear();
    demo.tok = tok;
    demo.special = new Set(demo.tok.specialTokens);
    await demo.matcher?.free();
    const kind = $("constrain-kind").value;
    const t0 = performance.now();
    demo.matcher = await demo.tok.constrain({ [kind]: $("constrain-spec").value });
    demo.tokens = [];
    demo.texts = [];
    demo.finished = false;
    await refresh();
    $("constrain-run").hidden = false;
    // A tokenizer's first matcher also makes its token trie: built, or read from what an
    // earlier visit kept in this browser (web/worker.js).
    const first = !demo.constrained.has(tok);
    demo.constrained.add(tok);
    const trie = !first ? "" : demo.matcher.trie === "file"
      ? " (this tokenizer's token trie read from this browser's cache)"
      : " (this tokenizer's token trie built first)";
    setState("ready", `Compiled and first mask in ${(performance.now() - t0).toFixed(0)} ms${trie}.`);
  } catch (err) {
    $("constrain-run").hidden = true;
    setState("error", errorText(err));
  }
}

async function step(id) {
  if (demo.state !== "ready") return;
  setState("busy");
  try {
    const wasAccepting = await demo.matcher.isAccepting();
    if (!(await demo.matcher.consume(id))) throw new Error(`token ${id} is not allowed here`);
    const text = await textOf(id);
    // the end of sequence (a grammar's own special tokens, such as <|endofprompt|>, go on)
    demo.finished = demo.special.has(text) && wasAccepting && (await demo.matcher.isStopped());
    demo.tokens.push(id);
    demo.texts.push(demo.finished ? "⟨end⟩" : text);
    await refresh();
    setState("ready");
  } catch (err) {
    setState("error", errorText(err));
  }
}

async function undo() {
  if (demo.state !== "ready" || !demo.tokens.length) return;
  setState("busy");
  if (!demo.finished) await demo.matcher.rollback(1); // the end of sequence adds nothing to undo
  demo.finished = false;
  demo.tokens.pop();
  demo.texts.pop();
  await refresh();
  setState("ready");
}

function start() {
  const kind = $("constrain-kind");
  $("constrain-spec").value = EXAMPLES[kind.value];
  fillExamples();
  addLlamaCppExamples();
  kind.addEventListener("change", () => { $("constrain-spec").value = EXAMPLES[kind.value]; fillExamples(); });
  $("constrain-example").addEventListener("change", () => {
    const [, k, text] = examples[Number($("constrain-example").value)];
    kind.value = k;
    $("constrain-spec").value = text;
  });
  $("constrain-start").addEventListener("click", begin);
  $("constrain-restart").addEventListener("click", begin);
  $("constrain-undo").addEventListener("click", undo);
  let searchTimer = 0;
  $("constrain-filter").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { if (demo.matcher) renderAllowed(); }, 120);
  });
  $("constrain-random").addEventListener("click", () => {
    if (!demo.allowed.length || demo.state !== "ready") return;
    setState("busy"); // (drawing a token may itself take a moment)
    randomToken(demo.allowed).then((id) => {
      setState("ready");
      return step(id);
    }, (err) => setState("error", errorText(err)));
  });
  setState("idle", "");
  // Tokenizer files opened in the Count view, after the bundled encodings.
  window.addEventListener("anytok-tokenizers", () => {
    const select = $("constrain-encoding");
    let group = select.querySelector("optgroup.user-files");
    for (const name of window.anytokDemo?.state?.userFiles?.keys() ?? []) {
      if ([...select.options].some((o) => o.value === name)) continue;
      if (!group) {
        group = document.createElement("optgroup");
        group.className = "user-files";
        group.label = "Your tokenizer files";
        select.append(group);
      }
      group.append(new Option(name.slice(5), name));
    }
  });
  // Every bundled encoding (o200k_base, already in the list, stays selected).
  AnyTok.encodings().then((names) => {
    const select = $("constrain-encoding");
    for (const name of names) {
      if (name !== select.value) select.insertBefore(new Option(name, name), select.querySelector("optgroup.user-files"));
    }
  }).catch(() => {});
}

start();
