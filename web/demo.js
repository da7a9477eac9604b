// The demo page: live token counts while typing, a token view, counts in every encoding, and
// large files with a progress bar; a user's own tokenizer file (tokenizer.json, .model, .atok,
// tekken .json, or a GGUF model file's header) can be opened and is converted in the page.  Everything goes through the public
// shim (anytok.js).
//
// Typing must not re-encode a long text: the text is cut into segments at positions where
// token counts add up exactly (segments.js), and counts and tokens are cached per segment.
// An edit changes one or two segments; only those go to the worker.

import { AnyTok } from "./anytok.js";
import { segments } from "./segments.js";
import { byteLabels, markHTML, utf8Bytes } from "./visible.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

const EDITOR_LIMIT = 1 << 20; // characters; a larger file is counted without going in the editor
const VIEW_LIMIT = 60_000; // characters shown as tokens
const BATCH_CHARS = 256 * 1024; // characters per request when counting much text
const CACHE_LIMIT = 50_000; // segments per cache before it starts afresh
const FILE_SEGMENTS = { min: 16384, max: 131072 };
const DEBOUNCE_MS = 40;
const SAMPLE = `anytok counts tokens exactly as tiktoken does, in pure Python running right here in your browser.

Type or paste here, or drop a file anywhere on the page: every character stays on this page.
Mixed scripts are fine: 日本語のテキスト, 中文文本, Ελληνικά, emoji 🙂, and code:

def greet(name: str) -> str:
    return f"Hello, {name}!"
`;

const SPECIAL_OPTIONS = {
  text: { disallowedSpecial: [] },
  special: { allowedSpecial: "all" },
  error: {},
};

const state = {
  names: [],
  encoding: params.get("encoding") ?? "o200k_base",
  special: "text",
  file: null, // { name, text, bytes } while a large file is shown
  tokenizers: new Map(), // name -> Promise<AnyTok>
  userFiles: new Map(), // "file:<file name>" -> { fileName, kind, converted } for opened tokenizer files
  caches: new Map(), // "encoding|special" -> { counts: Map, pieces: Map }
  generation: 0, // bumped by every change; a stale update stops early
  running: false,
  dirty: false,
  tableTimer: 0,
  compareAll: false,
  failed: null,
  mode: "text", // the token view shows: text, ids or both
};

// For tests and curious readers: what the last update did.
const demo = { lastUpdate: null, ready: null, state, text: () => editorText() };
window.anytokDemo = demo;

// --- small helpers --------------------------------------------------------------------------

const fmt = new Intl.NumberFormat("en");

function utf8Length(text) {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3; // a lone surrogate is encoded as U+FFFD
  }
  return n;
}

function countChars(text) {
  // Code points, as Python's len() counts them.
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n--;
      i++;
    }
  }
  return n;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1 << 20) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1 << 20)).toFixed(1)} MB`;
}

function msText(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

function showError(message) {
  $("error").textContent = message || "";
  $("error-box").hidden = !message;
}

// Messages by source; "info" ones (a tokenizer loaded) are good news, the others warnings.
const notices = new Map(); // source -> { message, kind }

function setNotice(source, message, kind = "notice") {
  if (message) notices.set(source, { message, kind });
  else notices.delete(source);
  for (const box of ["notice", "info"]) {
    const shown = [...notices.values()].filter((n) => n.kind === box).map((n) => n.message);
    $(box).textContent = shown.join(" ");
    $(`${box}-box`).hidden = shown.length === 0;
  }
}

function dismiss(box) {
  if (box === "error") showError(null);
  else for (const [source, n] of [...notices]) if (n.kind === box) setNotice(source, null);
}

function setStatus(status) {
  document.body.dataset.status = status;
}

function progress(fraction, label) {
  const row = $("progress-row");
  if (fraction === null) {
    row.hidden = true;
    return;
  }
  row.hidden = false;
  $("progress").value = fraction;
  $("progress-label").textContent = label;
}

function errorText(err) {
  if (err?.pythonType) return `${err.pythonType}: ${err.message}`;
  return err?.message ?? String(err);
}

// Python's advice (allowed_special=...) means nothing on this page: name the menu instead.
function countErrorText(err) {
  const refused = /disallowed special token (?:'([^']*)'|"([^"]*)")/.exec(err?.message ?? "");
  if (refused) {
    return `The text holds the special token ${refused[1] ?? refused[2]}, which "Special tokens: refuse" does not count. `
      + `Choose "count as plain text" or "count as special tokens" in the Special tokens menu.`;
  }
  return errorText(err);
}

// --- tokenizers and caches ------------------------------------------------------------------

const isUserFile = (name) => name.startsWith("file:");

function tokenizer(name) {
  if (!state.tokenizers.has(name) && isUserFile(name)) {
    return Promise.reject(new Error(`the tokenizer file ${name.slice(5)} is not loaded`));
  }
  if (!state.tokenizers.has(name)) {
    const promise = AnyTok.load({ encoding: name });
    promise.catch(() => state.tokenizers.delete(name)); // a later attempt may succeed
    state.tokenizers.set(name, promise);
  }
  return state.tokenizers.get(name);
}

// Big files are counted by two workers where the machine has the cores: a tokenizer of its own,
// whose first worker is the one every other tokenizer uses (only the second boots for it).
const PARALLEL_CHARS = 2 * 1024 * 1024;
const parallelTokenizers = new Map();

function parallelTokenizer(name) {
  if (isUserFile(name) || (navigator.hardwareConcurrency ?? 1) < 2) return tokenizer(name);
  if (!parallelTokenizers.has(name)) {
    const promise = AnyTok.load({ encoding: name, workers: 2 });
    promise.catch(() => parallelTokenizers.delete(name));
    parallelTokenizers.set(name, promise);
  }
  return parallelTokenizers.get(name);
}

function cacheFor(name) {
  const key = `${name}|${state.special}`;
  let cache = state.caches.get(key);
  if (!cache || cache.counts.size > CACHE_LIMIT) {
    cache = { counts: new Map(), pieces: new Map() };
    state.caches.set(key, cache);
  }
  return cache;
}

function currentText() {
  return state.file ? state.file.text : editorText();
}

// --- the editor's window ----------------------------------------------------------------------
//
// Chromium's <textarea> does work in proportion to its whole value on every keystroke (editing,
// selection offsets, layout, paint: 100-300 ms a key for 1 MB, in a long-task observer).  So a
// text of more than WINDOW_LIMIT characters is edited through a window: the editor holds about
// WINDOW characters around the caret, the rest is kept here (outside.before, outside.after) and
// counted and shown as ever; "Earlier part" / "Later part" move the window.
const WINDOW_LIMIT = 120_000;
const WINDOW = 24_000;
const outside = { before: "", after: "" };

function editorText() {
  const value = $("text").value;
  return outside.before || outside.after ? outside.before + value + outside.after : value;
}

const isLow = (text, i) => i > 0 && i < text.length && (text.charCodeAt(i) & 0xfc00) === 0xdc00;

// The editor shows `text` from about `at` - WINDOW / 2 (all of it when it is short), with the
// caret at `at`; cuts at line starts where one is near, never inside a surrogate pair.
function showWindow(text, at) {
  const el = $("text");
  let a = 0;
  let b = text.length;
  if (text.length > WINDOW_LIMIT) {
    a = Math.max(0, Math.min(at - WINDOW / 2, text.length - WINDOW));
    b = Math.min(text.length, a + WINDOW);
    const line = text.lastIndexOf("\n", a - 1);
    if (a > 0 && line >= 0 && a - line < 2000) a = line + 1;
    if (isLow(text, a)) a--;
    const end = text.indexOf("\n", b);
    if (b < text.length && end >= 0 && end - b < 2000) b = end + 1;
    if (isLow(text, b)) b++;
  }
  outside.before = text.slice(0, a);
  outside.after = text.slice(b);
  el.value = text.slice(a, b);
  const caret = Math.max(0, Math.min(at - a, el.value.length));
  el.setSelectionRange(caret, caret);
  const windowed = a > 0 || b < text.length;
  $("window-note").hidden = !windowed;
  if (windowed) {
    $("window-text").textContent = `A long text: the editor holds characters ${fmt.format(a + 1)}–${fmt.format(b)} of `
      + `${fmt.format(text.length)} (UTF-16 units); all of it is counted.`;
    $("window-earlier").disabled = a === 0;
    $("window-later").disabled = b === text.length;
  }
}

// The whole editor text set at once (a file, the start, Clear).
function setEditorText(text) {
  showWindow(text, text.length);
}

// After an edit: a text that grew past WINDOW_LIMIT (a paste) gets its window; one that shrank
// below it comes back whole; typing inside the window changes nothing here.  A value set by a
// script (an untrusted input event) is the whole text.
function keepWindow(event) {
  const el = $("text");
  if (!event.isTrusted) {
    showWindow(el.value, el.selectionEnd);
    return;
  }
  const total = outside.before.length + el.value.length + outside.after.length;
  const windowed = outside.before.length > 0 || outside.after.length > 0;
  if (windowed ? total > WINDOW_LIMIT && el.value.length <= 2 * WINDOW : total <= WINDOW_LIMIT) return;
  showWindow(editorText(), outside.before.length + el.selectionEnd);
}

function moveWindow(by) {
  const el = $("text");
  const text = editorText();
  showWindow(text, Math.max(0, Math.min(text.length, outside.before.length + WINDOW / 2 + by)));
  el.focus();
}

// Cuts are safe only for the split patterns of the bundled encodings (segments.js): a tokenizer
// file's text is encoded whole.
function currentSegments(text, name = state.encoding) {
  if (isUserFile(name)) return [text];
  return state.file ? segments(text, FILE_SEGMENTS) : editorSegments(text);
}

// The editor's segments, found again only after the edit: a keystroke in a 1 MB text must not
// scan the whole text.  The segments before the first one that changed are kept (less the last
// of them, whose cut may depend on the characters just after it); segments() then runs on the
// rest.  Its cuts are chosen from the text around each position alone and never within `min`
// (1024) units of the start, so the rest is cut exactly as a run over the whole text would.
let lastSegments = { text: "", segs: [] };
function editorSegments(text) {
  if (text === lastSegments.text) return lastSegments.segs;
  const old = lastSegments.segs;
  let pos = 0;
  let k = 0;
  while (k < old.length - 1 && text.startsWith(old[k], pos)) pos += old[k++].length;
  if (k > 0) pos -= old[--k].length;
  const segs = k ? [...old.slice(0, k), ...segments(text.slice(pos))] : segments(text);
  lastSegments = { text, segs };
  return segs;
}

// Characters, UTF-8 bytes and lone surrogates of each segment, kept so that a keystroke in a
// long text does not count them all again.
const facts = new Map();
function segmentFacts(s) {
  let f = facts.get(s);
  if (!f) {
    if (facts.size > CACHE_LIMIT) facts.clear();
    f = { chars: countChars(s), bytes: utf8Length(s), lone: s.match(LONE_SURROGATE)?.length ?? 0 };
    facts.set(s, f);
  }
  return f;
}

function textFacts(segs) {
  const out = { chars: 0, bytes: 0, lone: 0 };
  for (const s of segs) {
    const f = segmentFacts(s);
    out.chars += f.chars;
    out.bytes += f.bytes;
    out.lone += f.lone;
  }
  return out;
}

// The encode options for the special-token mode: tiktoken's for encodings; the others match
// the special tokens written in the text on their own, and add none around it.
function encodeOptions(name = state.encoding) {
  const kind = state.userFiles.get(name)?.kind ?? "encoding";
  return kind === "encoding" ? SPECIAL_OPTIONS[state.special] : {};
}

function displayName(name) {
  return isUserFile(name) ? name.slice(5) : name;
}

// Counts of every segment not yet cached, in requests of about BATCH_CHARS characters.
// Returns the segments it counted, or null if the text changed meanwhile.
async function countMissing(tok, segs, counts, onBatch, generation, options) {
  const missing = [...new Set(segs.filter((s) => !counts.has(s)))];
  let batch = [];
  let batchChars = 0;
  let done = 0;
  const flush = async () => {
    if (!batch.length) return;
    const result = await tok.countBatch(batch, options);
    batch.forEach((s, i) => counts.set(s, result[i]));
    done += batchChars;
    onBatch?.(done);
    batch = [];
    batchChars = 0;
  };
  for (const s of missing) {
    if (generation !== state.generation) return null;
    batch.push(s);
    batchChars += s.length;
    if (batchChars >= BATCH_CHARS) await flush();
  }
  await flush();
  return missing;
}

// --- the live update ------------------------------------------------------------------------

function changed(event) {
  if (event?.type === "input" && event.target === $("text")) keepWindow(event);
  state.generation++;
  setStatus("busy");
  clearTimeout(state.debounce);
  state.debounce = setTimeout(refresh, DEBOUNCE_MS);
}

async function refresh() {
  if (state.running) {
    state.dirty = true;
    return;
  }
  state.running = true;
  try {
    do {
      state.dirty = false;
      await update();
    } while (state.dirty);
  } finally {
    state.running = false;
  }
}

// A tokenizer's first use does work of its own (Python modules imported, the text table built
// for non-ASCII text): done once, off the clock, so that the first count's "Time" is the count's.
const warmed = new WeakSet();
async function warmUp(tok, options) {
  if (warmed.has(tok)) return;
  warmed.add(tok);
  try {
    await tok.tokenize("Warm up: caf\u00e9 \u65e5\u672c\u8a9e \u{1F916}\n", options);
  } catch {
    // (the count itself reports what is wrong)
  }
}

async function update() {
  const generation = state.generation;
  const name = state.encoding;
  const text = currentText();
  let started = performance.now();
  let tok = null;
  try {
    tok = await tokenizer(name);
    showRuntime(tok);
    await warmUp(tok, encodeOptions(name));
    started = performance.now(); // the time shown is the count's own, not the start-up's
    const segs = currentSegments(text);
    const { counts, pieces } = cacheFor(name);
    const options = encodeOptions(name);

    // Tokens of the beginning, for the view; counts only for the rest.
    const shown = [];
    let shownChars = 0;
    for (const s of segs) {
      if (shownChars >= VIEW_LIMIT || (s.length > VIEW_LIMIT && isUserFile(name))) break;
      shown.push(s);
      shownChars += s.length;
    }
    const needPieces = [...new Set(shown.filter((s) => !pieces.has(s)))];
    const totalChars = text.length;
    const big = segs.length > 1 && totalChars > BATCH_CHARS;
    const label = state.file ? `Counting ${state.file.name}` : "Counting";
    let missingChars = 0;
    for (const s of segs) if (!counts.has(s)) missingChars += s.length;
    if (missingChars > BATCH_CHARS) clearResults(`${label} with ${displayName(name)}…`);
    const tokenized = Promise.all(
      needPieces.map((s) =>
        tok.tokenize(s, options).then((p) => {
          pieces.set(s, p);
          counts.set(s, p.reduce((n, piece) => n + piece.ids.length, 0));
        }),
      ),
    );
    const rest = segs.slice(shown.length);
    const counter = state.file && totalChars >= PARALLEL_CHARS ? await parallelTokenizer(name) : tok;
    const counted = countMissing(counter, rest, counts, (sent) => {
      const done = Math.min(1, (shownChars + sent) / totalChars);
      if (big) progress(done, `${label}: ${Math.floor(100 * done)} %`);
    }, generation, options);
    counted.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
    await tokenized;
    const sent = await counted;
    if (sent === null || generation !== state.generation) return; // the text changed meanwhile
    const reencoded = [...needPieces, ...sent].reduce((n, s) => n + utf8Length(s), 0);

    const total = segs.reduce((n, s) => n + counts.get(s), 0);
    const elapsed = performance.now() - started;
    const whole = state.file ? null : textFacts(isUserFile(name) ? editorSegments(text) : segs);
    const chars = state.file ? state.file.chars : whole.chars;
    const bytes = state.file ? state.file.bytes : whole.bytes;
    $("count").textContent = fmt.format(total);
    $("count").dataset.count = String(total);
    const file = state.userFiles.get(name);
    $("which").textContent = !file
      ? `${name}, special tokens ${$("special").selectedOptions[0].text}`
      : file.kind === "encoding"
        ? `${file.fileName} (${tok.name}), special tokens ${$("special").selectedOptions[0].text}`
        : `${file.fileName} (${KIND_NAMES[file.kind]}), special tokens in the text matched, none added`;
    $("chars").textContent = fmt.format(chars);
    $("bytes").textContent = fmt.format(bytes);
    $("ratio").textContent = total ? (chars / total).toFixed(2) : "–";
    $("time").textContent = state.file?.readMs ? `${msText(elapsed)} + ${msText(state.file.readMs)} reading` : msText(elapsed);
    $("reencoded").textContent = reencoded === bytes ? `all ${sizeText(bytes)}` : `${sizeText(reencoded)} of ${sizeText(bytes)}`;
    demo.lastUpdate = {
      encoding: name, total, bytes, reencodedBytes: reencoded, segments: segs.length, shownChars, ms: elapsed,
      workers: counter.workers,
    };
    renderTokens(shown, pieces, shownChars, totalChars);
    progress(null);
    const lone = whole ? whole.lone : text.match(LONE_SURROGATE)?.length ?? 0;
    setNotice(
      "surrogates",
      lone
        ? `The text holds ${lone} lone surrogate${lone > 1 ? "s" : ""} (half of a UTF-16 pair, not valid Unicode); each is counted as U+FFFD, as tiktoken does.`
        : null,
    );
    showError(null);
    state.failed = null;
    document.querySelector("main.layout").classList.remove("stale");
    setStatus("ready");
    scheduleTable();
  } catch (err) {
    if (generation !== state.generation) return;
    progress(null);
    state.failed = err;
    $("count").textContent = "–";
    delete $("count").dataset.count;
    // The figures and tokens of the text before stay, greyed out and said to be out of date.
    document.querySelector("main.layout").classList.add("stale");
    if (tok) {
      showError(`Could not count with ${displayName(name)}: ${countErrorText(err)}`);
    } else {
      showError(`Could not load the encoding "${name}": ${errorText(err)}`);
      if (!$("runtime").classList.contains("ok")) showRuntime(null);
      for (const cell of $("counts").querySelectorAll("td.tokens")) cell.textContent = "";
    }
    setStatus("error");
  }
}

// --- the token view -------------------------------------------------------------------------

const segmentViews = new Map(); // "encoding|special|mode|segment" -> element

// One span per token: its text (whitespace marked; a token holding part of a character's bytes as
// <0xE5>), its id, or both, as the mode says.  Pieces come from the tokenizer's exact offsets
// (tok.tokenize: encode with offsets), so each token covers the characters it stands for.  Each span knows its piece (data-k), its character
// span within the segment (data-s, data-e, in code points as Python counts them) and its bytes.
function segmentView(pieces, mode) {
  const el = document.createElement("span");
  el.className = "seg";
  el.pieces = pieces;
  let html = "";
  let at = 0;
  let n = 0;
  const span = (k, cls, ids, start, end, bytes, label, part = "") => {
    const id = mode === "text" ? "" : `<span class="id">${ids}</span>`;
    const tx = mode === "ids" ? "" : `<span class="tx">${label}</span>`;
    return `<span class="t ${cls}c${n++ % 6}" data-k="${k}" data-ids="${ids}" data-s="${start}" data-e="${end}" data-b="${bytes}"${part}>${tx}${id}</span>`;
  };
  pieces.forEach((p, k) => {
    const chars = countChars(p.text);
    if (!p.ids.length) {
      // text no token covers (a normalizer removed it): shown, not coloured
      html += `<span class="gap" title="in no token">${markHTML(p.text)}</span>`;
      at += chars;
      return;
    }
    const labels = byteLabels(p.text, p.ids, p.byteLengths);
    if (labels) {
      p.ids.forEach((id, j) => {
        const bytes = p.byteLengths?.[j] ?? 1;
        html += span(k, "byte ", id, at, at + chars, bytes, markHTML(labels[j]), ` data-part="${j + 1}/${p.ids.length}"`);
      });
    } else {
      const own = p.ids.length === 1 && p.byteLengths?.[0] >= 0 ? p.byteLengths[0] : utf8Bytes(p.text).length;
      html += span(k, p.ids.length > 1 ? "split " : "", p.ids.join(" "), at, at + chars, own, markHTML(p.text));
    }
    at += chars;
  });
  el.innerHTML = html;
  return el;
}

function renderTokens(shown, pieces, shownChars, totalChars) {
  const prefix = `${state.encoding}|${state.special}|${state.mode}|`;
  const used = new Set();
  let start = 0;
  const views = shown.map((s) => {
    let el = segmentViews.get(prefix + s);
    if (!el) {
      el = segmentView(pieces.get(s), state.mode);
      segmentViews.set(prefix + s, el);
    } else if (used.has(el)) {
      const copy = el.cloneNode(true); // the same text twice
      copy.pieces = el.pieces;
      el = copy;
    }
    used.add(el);
    el.dataset.start = String(start);
    start += segmentFacts(s).chars;
    return el;
  });
  state.shown = { shown, pieces, shownChars, totalChars };
  // An edit beyond the shown part (typing at the end of a long text) changes nothing here: the
  // view is left alone rather than laid out again.
  const same = state.viewEls?.length === views.length && views.every((el, i) => el === state.viewEls[i]);
  if (!same) {
    // Blocks of whole lines, which the browser lays out only when scrolled into view
    // (content-visibility: auto): a change lays out the few blocks on screen, not 60,000 characters.
    const blocks = [];
    let block = null;
    views.forEach((el, i) => {
      if (!block || shown[i - 1].endsWith("\n")) {
        block = document.createElement("div");
        block.className = "chunk";
        blocks.push(block);
      }
      block.append(el);
    });
    $("tokens").replaceChildren(...blocks);
    state.viewEls = views;
  }
  if (segmentViews.size > 4 * CACHE_LIMIT) segmentViews.clear();
  $("tokens-note").textContent =
    totalChars > shownChars
      ? shownChars
        ? `Showing the tokens of the first ${fmt.format(shownChars)} of ${fmt.format(totalChars)} characters.`
        : `Tokens are shown for texts up to ${fmt.format(VIEW_LIMIT)} characters with a tokenizer file.`
      : "";
}

function setMode(mode) {
  state.mode = mode;
  for (const m of ["text", "ids", "both"]) $(`show-${m}`).setAttribute("aria-pressed", String(m === mode));
  $("tokens").className = `tokens-view mode-${mode}`;
  if (state.shown) {
    const { shown, pieces, shownChars, totalChars } = state.shown;
    renderTokens(shown, pieces, shownChars, totalChars);
  }
}

/** What the inspect line says of a token span: text, id(s), bytes, character span. */
function describe(t) {
  const seg = t.closest(".seg");
  const piece = seg.pieces[Number(t.dataset.k)];
  const base = Number(seg.dataset.start);
  const [s, e] = [base + Number(t.dataset.s), base + Number(t.dataset.e)];
  const ids = t.dataset.ids.split(" ");
  const part = t.dataset.part;
  const [j, of] = part ? part.split("/").map(Number) : [0, 0];
  const what = part
    ? `${byteLabels(piece.text, piece.ids, piece.byteLengths)[j - 1]}: part ${j} of ${of} of ${JSON.stringify(piece.text)}`
    : JSON.stringify(piece.text) + (ids.length > 1 ? ` (one character split between ${ids.length} tokens)` : "");
  return `${what} · ${ids.length > 1 ? "ids" : "id"} ${ids.join(", ")} · ${t.dataset.b} byte${t.dataset.b === "1" ? "" : "s"}`
    + ` · characters ${fmt.format(s)}–${fmt.format(e)}`;
}

function inspect(event) {
  const t = event.target.closest?.(".t");
  if (!t || !t.closest(".seg")) return;
  if (event.type === "click") pick(t);
  else $("inspect").textContent = describe(t);
}

function pick(t) {
  $("tokens").querySelector(".t.picked")?.classList.remove("picked");
  t.classList.add("picked");
  $("inspect").textContent = describe(t);
}

// From the keyboard: the arrow keys move the picked token (the view itself takes the focus).
function stepToken(event) {
  const by = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
  if (!by) return;
  const all = $("tokens").querySelectorAll(".t");
  if (!all.length) return;
  event.preventDefault();
  const at = [...all].indexOf($("tokens").querySelector(".t.picked"));
  const next = all[Math.min(all.length - 1, Math.max(0, at < 0 ? 0 : at + by))];
  pick(next);
  next.scrollIntoView({ block: "nearest" });
}

// --- copying ids ----------------------------------------------------------------------------

async function copyIds(format) {
  const name = state.encoding;
  $("copied").textContent = "…";
  try {
    const tok = await tokenizer(name);
    const ids = await tok.encode(currentText(), encodeOptions(name));
    const text = format === "json" ? JSON.stringify(ids) : ids.join(" ");
    demo.lastCopy = text;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // (no clipboard permission: the older way, from a selected text box)
      const box = document.createElement("textarea");
      box.value = text;
      document.body.append(box);
      box.select();
      const ok = document.execCommand("copy");
      box.remove();
      if (!ok) throw new Error("the browser refused to copy");
    }
    $("copied").textContent = `Copied ${fmt.format(ids.length)} ids`;
  } catch (err) {
    $("copied").textContent = "";
    showError(`Could not copy the ids: ${countErrorText(err)}`);
  }
}

// --- counts in every encoding ---------------------------------------------------------------

function buildTable() {
  const body = $("counts").tBodies[0];
  body.replaceChildren(
    ...state.names.map((name) => {
      const row = document.createElement("tr");
      row.dataset.encoding = name;
      row.innerHTML = `<td>${name}</td><td class="num tokens">…</td><td class="num ratio"></td>`;
      row.tabIndex = 0;
      row.addEventListener("click", () => selectEncoding(name));
      row.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          selectEncoding(name);
        }
      });
      return row;
    }),
  );
  markSelected();
}

function markSelected() {
  for (const row of $("counts").tBodies[0].rows) row.classList.toggle("selected", row.dataset.encoding === state.encoding);
}

function scheduleTable() {
  clearTimeout(state.tableTimer);
  const text = currentText();
  const auto = !state.file || state.compareAll;
  $("compare").hidden = auto;
  if (!auto) {
    for (const row of $("counts").tBodies[0].rows) {
      if (row.dataset.encoding !== state.encoding) {
        row.querySelector(".tokens").textContent = "";
        row.querySelector(".ratio").textContent = "";
      }
    }
  }
  state.tableTimer = setTimeout(() => updateTable(text, auto), 250);
}

async function updateTable(text, all) {
  const generation = state.generation;
  const segs = state.file ? segments(text, FILE_SEGMENTS) : editorSegments(text); // bundled encodings only
  const chars = state.file ? state.file.chars : textFacts(segs).chars;
  for (const name of state.names) {
    if (!all && name !== state.encoding) continue;
    const row = $("counts").querySelector(`tr[data-encoding="${name}"]`);
    const cell = row.querySelector(".tokens");
    try {
      const tok = await tokenizer(name);
      const { counts } = cacheFor(name);
      const big = state.file && name !== state.encoding;
      const sent = await countMissing(tok, segs, counts, (done) => {
        if (big) progress(done / text.length, `Counting ${state.file.name} with ${name}: ${Math.floor((100 * done) / text.length)} %`);
      }, generation, SPECIAL_OPTIONS[state.special]);
      if (sent === null || generation !== state.generation) return;
      const total = segs.reduce((n, s) => n + counts.get(s), 0);
      cell.textContent = fmt.format(total);
      cell.dataset.count = String(total);
      row.querySelector(".ratio").textContent = total ? (chars / total).toFixed(2) : "–";
      row.title = "";
    } catch (err) {
      if (generation !== state.generation) return;
      cell.textContent = "error";
      delete cell.dataset.count;
      row.title = errorText(err);
    }
  }
  if (state.file) progress(null);
}

// --- controls -------------------------------------------------------------------------------

function selectEncoding(name) {
  state.encoding = name;
  $("encoding").value = name;
  markSelected();
  const file = state.userFiles.get(name);
  // Special-token modes are tiktoken's: a Hugging Face or SentencePiece file has none.
  $("special").disabled = Boolean(file && file.kind !== "encoding");
  $("special").title = $("special").disabled ? "This tokenizer matches the special tokens in the text itself, as its library does." : "";
  $("download-atok").hidden = !file?.converted;
  changed();
}

// --- the user's tokenizer files -------------------------------------------------------------

const KIND_NAMES = { encoding: "tiktoken-style", hf: "Hugging Face tokenizer.json", sentencepiece: "SentencePiece", gguf: "GGUF (llama.cpp)" };

// Read a tokenizer file, have the worker build it (anytok.load converts it), and select it.
async function openTokenizer(file) {
  state.generation++;
  setStatus("busy");
  showError(null);
  const name = `file:${file.name}`;
  try {
    // AnyTok.load reads the file (of a GGUF model file only its header) and converts it.
    progress(0.5, `Reading and converting ${file.name} (${sizeText(file.size)})…`);
    const started = performance.now();
    const tok = await AnyTok.load({ file, fileName: file.name });
    const head = new Uint8Array(await file.slice(0, 6).arrayBuffer());
    const isAtok = String.fromCharCode(...head) === "ANYTOK";
    for (const key of [...state.caches.keys()]) if (key.startsWith(`${name}|`)) state.caches.delete(key);
    for (const key of [...segmentViews.keys()]) if (key.startsWith(`${name}|`)) segmentViews.delete(key);
    state.tokenizers.set(name, Promise.resolve(tok));
    state.userFiles.set(name, { fileName: file.name, kind: tok.kind, converted: !isAtok });
    let option = [...$("encoding").options].find((o) => o.value === name);
    if (!option) {
      let group = $("encoding").querySelector("optgroup.user-files");
      if (!group) {
        group = document.createElement("optgroup");
        group.className = "user-files";
        group.label = "Your tokenizer files";
        $("encoding").append(group);
      }
      option = new Option(file.name, name);
      group.append(option);
    }
    progress(null);
    setNotice(
      "tokenizer",
      `Loaded ${file.name}: ${KIND_NAMES[tok.kind]} tokenizer "${tok.name}", ${fmt.format(tok.nVocab)} tokens, in ${msText(performance.now() - started)}.`,
      "info",
    );
    window.dispatchEvent(new CustomEvent("anytok-tokenizers"));
    selectEncoding(name);
  } catch (err) {
    progress(null);
    showError(`Could not load ${file.name} as a tokenizer: ${errorText(err)}`);
    setStatus("error");
  }
}

async function saveAtok() {
  const name = state.encoding;
  const file = state.userFiles.get(name);
  if (!file) return;
  try {
    const data = await (await tokenizer(name)).toAtok();
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([data], { type: "application/octet-stream" }));
    link.download = `${file.fileName.replace(/\.(json|model(\.v\d+)?|tiktoken|gguf)$/i, "")}.atok`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
  } catch (err) {
    showError(`Could not convert ${file.fileName}: ${errorText(err)}`);
  }
}

async function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onprogress = (e) => {
      if (e.lengthComputable) progress(e.loaded / e.total / 10, `Reading ${file.name}: ${sizeText(e.loaded)}`);
    };
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error ?? new Error("could not read the file"));
    reader.readAsArrayBuffer(file);
  });
}

async function openFile(file) {
  state.generation++;
  setStatus("busy");
  showError(null);
  const started = performance.now();
  try {
    progress(0, `Reading ${file.name}`);
    const buffer = await readFile(file);
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(buffer);
      setNotice("utf8", null);
    } catch {
      text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(buffer);
      setNotice("utf8", `${file.name} is not valid UTF-8: its invalid bytes were read as U+FFFD before counting.`);
    }
    const readMs = performance.now() - started;
    // A textarea turns "\r\n" into "\n": such a file stays out of the editor, to be counted as it is.
    if (text.length <= EDITOR_LIMIT && !text.includes("\r")) {
      state.file = null;
      setEditorText(text);
      showFileView();
      changed();
      return;
    }
    const why = text.includes("\r") ? "it has \\r line ends, which the editor would change" : "too large to edit here";
    state.file = { name: file.name, text, bytes: buffer.byteLength, chars: countChars(text), readMs, why };
    state.compareAll = false;
    showFileView();
    clearResults(`Counting ${file.name}…`);
    changed();
  } catch (err) {
    progress(null);
    showError(`Could not open ${file.name}: ${errorText(err)}`);
    setStatus("error");
  }
}

// While a large file is counted, old numbers would read as its own.
function clearResults(message) {
  for (const id of ["chars", "bytes", "ratio", "time", "reencoded"]) $(id).textContent = "–";
  $("count").textContent = "…";
  delete $("count").dataset.count;
  for (const cell of $("counts").querySelectorAll("td.tokens, td.ratio")) {
    cell.textContent = "";
    delete cell.dataset.count;
  }
  $("which").textContent = message;
  $("tokens").replaceChildren();
  state.shown = null;
  state.viewEls = null;
  $("tokens-note").textContent = message;
}

function showFileView() {
  const file = state.file;
  $("text").hidden = Boolean(file);
  $("file-view").hidden = !file;
  if (file) {
    $("file-name").textContent = `${file.name} · ${sizeText(file.bytes)}`;
    $("file-why").textContent = `Counted as a file (${file.why}). The token view shows its beginning.`;
  }
}

function closeFile() {
  state.file = null;
  state.compareAll = false;
  setNotice("utf8", null);
  showFileView();
  changed();
}

function wireDrop() {
  const overlay = $("drop-overlay");
  let depth = 0;
  const hasFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes("Files");
  const onTokenizerButton = (e) => Boolean(e.target?.closest?.("#open-tokenizer"));
  window.addEventListener("dragenter", (e) => {
    if (!hasFiles(e)) return;
    depth++;
    overlay.hidden = false;
  });
  window.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (!depth) {
      overlay.hidden = true;
      $("open-tokenizer").classList.remove("drop-target");
    }
  });
  window.addEventListener("dragover", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    const onButton = onTokenizerButton(e);
    $("open-tokenizer").classList.toggle("drop-target", onButton);
    overlay.firstElementChild.textContent = onButton
      ? "Drop a tokenizer file (tokenizer.json, .model, .atok, .gguf) to use it"
      : "Drop a text file to count its tokens";
  });
  window.addEventListener("drop", (e) => {
    depth = 0;
    overlay.hidden = true;
    $("open-tokenizer").classList.remove("drop-target");
    const file = e.dataTransfer?.files?.[0];
    if (!file || e.defaultPrevented) return; // (taken by a view's own drop: the Chat view's images)
    e.preventDefault();
    // (a GGUF model file is a tokenizer wherever it is dropped: never read as text)
    if (onTokenizerButton(e) || /\.gguf$/i.test(file.name)) openTokenizer(file);
    else openFile(file);
  });
}

async function start() {
  const text = $("text");
  setEditorText(params.get("text") ?? SAMPLE);
  text.addEventListener("input", changed);
  $("window-earlier").addEventListener("click", () => moveWindow(-WINDOW / 2));
  $("window-later").addEventListener("click", () => moveWindow(WINDOW / 2));
  $("special").addEventListener("change", (e) => {
    state.special = e.target.value;
    changed();
  });
  $("encoding").addEventListener("change", (e) => selectEncoding(e.target.value));
  $("open-file").addEventListener("click", () => $("file").click());
  $("open-tokenizer").addEventListener("click", () => $("tokenizer-file").click());
  $("tokenizer-file").addEventListener("change", (e) => {
    const file = e.target.files?.[0];
    e.target.value = "";
    if (file) openTokenizer(file);
  });
  $("download-atok").addEventListener("click", saveAtok);
  $("file").addEventListener("change", (e) => {
    const file = e.target.files?.[0];
    e.target.value = "";
    if (file) openFile(file);
  });
  $("clear").addEventListener("click", () => {
    if (state.file) closeFile();
    setEditorText("");
    changed();
    text.focus();
  });
  $("back-to-editor").addEventListener("click", closeFile);
  $("compare").addEventListener("click", () => {
    state.compareAll = true;
    scheduleTable();
  });
  $("tokens").addEventListener("mouseover", inspect);
  $("tokens").addEventListener("click", inspect);
  $("tokens").addEventListener("keydown", stepToken);
  for (const m of ["text", "ids", "both"]) $(`show-${m}`).addEventListener("click", () => setMode(m));
  $("copy-json").addEventListener("click", () => copyIds("json"));
  $("copy-spaced").addEventListener("click", () => copyIds("spaced"));
  for (const b of document.querySelectorAll("button.dismiss")) b.addEventListener("click", () => dismiss(b.dataset.dismiss));
  wireDrop();
  window.addEventListener("unhandledrejection", (e) => showError(`Unexpected error: ${errorText(e.reason)}`));

  try {
    state.names = await AnyTok.encodings();
  } catch (err) {
    showError(`Could not start: ${errorText(err)}`);
    setStatus("error");
    return;
  }
  $("encoding").replaceChildren(...state.names.map((n) => new Option(n, n)));
  $("encoding").value = state.names.includes(state.encoding) ? state.encoding : "";
  buildTable();
  changed(); // a failure shows in the page; choosing another encoding tries again
}

// The first visit downloads ~5 MB (Pyodide, the standard library, the wheel, a vocabulary): the
// bytes so far in a progress bar, from the worker's reports (AnyTok.onDownload).
const downloads = new Map(); // url -> { loaded, total }
let readyAfter = null; // ms from the page's start to its first count

function showDownload(d) {
  downloads.set(d.url, d);
  if (readyAfter !== null) return;
  let loaded = 0;
  let total = 0;
  for (const x of downloads.values()) {
    loaded += x.loaded;
    total += x.total ?? (x.done ? x.loaded : Math.max(x.loaded, 1 << 20));
  }
  const bar = $("boot-progress");
  bar.hidden = false;
  bar.max = Math.max(total, loaded, 1);
  bar.value = loaded;
  $("runtime").textContent = `Downloading: ${sizeText(loaded)}…`;
}

function showRuntime(tok) {
  if (!tok) {
    $("runtime").textContent = "Error";
    $("runtime").className = "pill bad";
    $("boot-progress").hidden = true;
    return;
  }
  const rt = tok.runtimeInfo;
  if (readyAfter === null) {
    readyAfter = performance.now();
    demo.readyAfter = readyAfter;
    demo.downloaded = [...downloads.values()].reduce((n, d) => n + d.loaded, 0);
  }
  $("boot-progress").hidden = true;
  const fetched = demo.downloaded ? `, ${sizeText(demo.downloaded)} loaded` : "";
  $("runtime").textContent = `Ready in ${(readyAfter / 1000).toFixed(1)} s${fetched} · Python ${rt.python} · anytok ${rt.anytok}`;
  $("runtime").className = "pill ok";
  $("versions").textContent = `anytok ${rt.anytok} on Python ${rt.python} (Pyodide), in a Web Worker.`;
}

AnyTok.onDownload = showDownload;
demo.ready = start();
