// The demo page's Constrain view: type a regex, a JSON Schema or a Lark grammar, then step
// through a generation by clicking allowed tokens (or "Random allowed token"), seeing how many
// tokens the mask allows and the time each step took.  Only the public shim: tok.constrain.

import { AnyTok } from "./anytok.js";

const $ = (id) => document.getElementById(id);
const fmt = new Intl.NumberFormat("en");
const SHOWN = 300; // allowed tokens listed as buttons

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
};

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
};
window.anytokConstrainDemo = demo;

function setState(state, message = "") {
  demo.state = state;
  $("constrain-view").dataset.state = state;
  $("constrain-message").textContent = message;
  $("constrain-message").className = `train-message ${state === "error" ? "bad" : ""}`;
  const busy = state === "starting" || state === "busy";
  for (const id of ["constrain-start", "constrain-random", "constrain-undo", "constrain-restart"]) $(id).disabled = busy;
}

function errorText(err) {
  return err?.pythonType ? `${err.pythonType}: ${err.message}` : err?.message ?? String(err);
}

function shown(text) {
  return text.replace(/ /g, "␣").replace(/\n/g, "↵").replace(/\t/g, "⇥") || "∅";
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
  // The only special token a mask allows is the end of sequence; once it is taken, the
  // generation is over.
  demo.allowed = demo.finished ? [] : await m.allowed();
  const [accepting, stopped] = [await m.isAccepting(), await m.isStopped()];
  $("constrain-stats").textContent = `step ${demo.tokens.length} · ${fmt.format(n)} tokens allowed · mask ${demo.lastMs.toFixed(1)} ms`
    + (demo.finished ? " · finished" : accepting ? " · complete (end of sequence allowed)" : "") + (stopped && !demo.finished ? " · stopped" : "");
  const out = $("constrain-output");
  out.replaceChildren(...demo.texts.map((text, i) => {
    const span = document.createElement("span");
    span.className = `t c${i % 6}`;
    span.textContent = text;
    span.title = `id ${demo.tokens[i]}`;
    return span;
  }));
  const texts = await Promise.all(demo.allowed.slice(0, SHOWN).map((id) => demo.tok.decode([id])));
  $("constrain-allowed").replaceChildren(...demo.allowed.slice(0, SHOWN).map((id, i) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "quiet";
    b.textContent = demo.special.has(texts[i]) ? "⟨end⟩" : shown(texts[i]);
    b.title = `id ${id}`;
    b.addEventListener("click", () => step(id));
    return b;
  }));
  $("constrain-random").disabled = demo.allowed.length === 0;
}

async function begin() {
  setState("starting", "Compiling the constraint…");
  try {
    const name = $("constrain-encoding").value;
    if (!demo.toks.has(name)) {
      const loading = AnyTok.load({ encoding: name });
      demo.toks.set(name, loading);
      loading.catch(() => demo.toks.delete(name));
    }
    demo.tok = await demo.toks.get(name);
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
    setState("ready", `Compiled and first mask in ${(performance.now() - t0).toFixed(0)} ms.`);
  } catch (err) {
    $("constrain-run").hidden = true;
    setState("error", errorText(err));
  }
}

async function step(id) {
  if (demo.state !== "ready") return;
  setState("busy");
  try {
    if (!(await demo.matcher.consume(id))) throw new Error(`token ${id} is not allowed here`);
    const text = await demo.tok.decode([id]);
    demo.finished = demo.special.has(text);
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
  kind.addEventListener("change", () => { $("constrain-spec").value = EXAMPLES[kind.value]; });
  $("constrain-start").addEventListener("click", begin);
  $("constrain-restart").addEventListener("click", begin);
  $("constrain-undo").addEventListener("click", undo);
  $("constrain-random").addEventListener("click", () => {
    if (demo.allowed.length) step(demo.allowed[Math.floor(Math.random() * demo.allowed.length)]);
  });
  setState("idle", "");
  // Every bundled encoding (o200k_base, already in the list, stays selected).
  AnyTok.encodings().then((names) => {
    const select = $("constrain-encoding");
    for (const name of names) {
      if (name !== select.value) select.append(new Option(name, name));
    }
  }).catch(() => {});
}

start();
