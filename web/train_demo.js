// The demo page's Train view: pick or drop text files, train a byte-level BPE tokenizer on them
// with AnyTok.train (anytok.train in a worker of its own), watch its progress, cancel it, try the
// result on text and download it as .atok, tokenizer.json or .tiktoken.  Only the public shim.
//
// Drops are caught on the window in the capture phase while this view is shown, before the
// Count view's handlers (demo.js) see them.

import { AnyTok } from "./anytok.js";
import { markHTML } from "./visible.js";

const $ = (id) => document.getElementById(id);
const fmt = new Intl.NumberFormat("en");
const TRY_LIMIT = 20_000; // characters shown as tokens
const COUNT_SHARE = 0.3; // of the progress bar: counting, then merging

const train = {
  files: [], // [{ name, size, text }]
  tok: null, // the trained AnyTok
  controller: null,
  progress: [], // the reports of the current or last training
  state: "idle", // idle, reading, training, done, cancelled, error
  tries: 0, // bumped by every edit of the try box
};
window.anytokTrainDemo = train;

function setState(state, message = "") {
  train.state = state;
  $("train-view").dataset.state = state;
  $("train-message").textContent = message;
  $("train-message").className = `train-message ${state === "error" ? "bad" : ""}`;
  const busy = state === "training" || state === "reading";
  $("train-start").disabled = busy || train.files.length === 0;
  $("train-cancel").hidden = state !== "training";
  for (const id of ["train-pick", "train-clear-files", "train-vocab", "train-pattern", "train-style", "train-min-frequency", "train-specials"]) {
    $(id).disabled = busy;
  }
}

function sizeText(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(2)} MB`;
}

function errorText(err) {
  if (err?.pythonType) return `${err.pythonType}: ${err.message}`;
  return err?.message ?? String(err);
}

const visible = markHTML;

// --- views ----------------------------------------------------------------------------------

// The page's views: Count (demo.js), Train (here), Constrain (constrain_demo.js), Compare
// (compare_demo.js), Chat (chat_demo.js).
const VIEWS = ["count", "train", "constrain", "compare", "chat"];
function showView(view) {
  document.body.dataset.view = view;
  document.querySelector("main.layout").hidden = view !== "count";
  $("train-view").hidden = view !== "train";
  $("constrain-view").hidden = view !== "constrain";
  $("chat-view").hidden = view !== "chat";
  $("compare-view").hidden = view !== "compare";
  for (const name of VIEWS) $(`view-${name}`).setAttribute("aria-pressed", String(view === name));
  window.dispatchEvent(new CustomEvent("anytok-view", { detail: view }));
}

// --- files ----------------------------------------------------------------------------------

function renderFiles() {
  const list = $("train-file-list");
  list.replaceChildren(
    ...train.files.map((f) => {
      const li = document.createElement("li");
      li.textContent = `${f.name} · ${sizeText(f.size)}`;
      return li;
    }),
  );
  const total = train.files.reduce((n, f) => n + f.size, 0);
  $("train-clear-files").hidden = train.files.length === 0;
  if (train.files.length) {
    const li = document.createElement("li");
    li.className = "total";
    li.textContent = `${train.files.length} file${train.files.length > 1 ? "s" : ""}, ${sizeText(total)} in all`;
    list.append(li);
  }
}

async function addFiles(fileList) {
  const files = [...fileList];
  if (!files.length || train.state === "training") return;
  setState("reading", `Reading ${files.length} file${files.length > 1 ? "s" : ""}…`);
  try {
    for (const file of files) {
      const bytes = new Uint8Array(await file.arrayBuffer());
      let text;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        throw new Error(`${file.name} is not UTF-8 text`);
      }
      train.files.push({ name: file.name, size: bytes.length, text });
    }
    renderFiles();
    setState("idle", "");
  } catch (err) {
    renderFiles();
    setState("error", `Could not read the files: ${errorText(err)}`);
  }
}

// --- training -------------------------------------------------------------------------------

function showProgress(p, totalChars) {
  train.progress.push(p);
  const row = $("train-progress-row");
  row.hidden = false;
  let fraction;
  let label;
  if (p.phase === "count") {
    fraction = COUNT_SHARE * Math.min(1, (p.mb * 1e6) / Math.max(1, totalChars));
    label = `Counting pieces: ${p.mb.toFixed(2)} MB at ${p.mbPerS.toFixed(2)} MB/s, ${fmt.format(p.distinct)} distinct`;
  } else {
    fraction = COUNT_SHARE + (1 - COUNT_SHARE) * (p.total ? p.done / p.total : 1);
    const eta = p.etaS === null || p.etaS === undefined ? "" : p.finished ? "" : ` · about ${Math.ceil(p.etaS)} s left`;
    label = `Merging: ${fmt.format(p.done)} of ${fmt.format(p.total)}${eta}`;
  }
  $("train-progress").value = fraction;
  $("train-progress-label").textContent = label;
}

function options() {
  const vocabSize = Number($("train-vocab").value);
  const specialTokens = $("train-specials").value.split(/\s+/).filter(Boolean);
  const minFrequency = Number($("train-min-frequency").value || 0);
  return { vocabSize, style: $("train-style").value, pattern: $("train-pattern").value, specialTokens, minFrequency };
}

async function startTraining() {
  if (!train.files.length || train.state === "training") return;
  const opts = options();
  if (!Number.isInteger(opts.vocabSize) || opts.vocabSize < 256) {
    setState("error", "The vocabulary size must be a whole number of at least 256 (it counts the 256 bytes).");
    return;
  }
  if (!Number.isInteger(opts.minFrequency) || opts.minFrequency < 0) {
    setState("error", "The minimum frequency must be a whole number, 0 or more.");
    return;
  }
  const texts = train.files.map((f) => f.text);
  const totalChars = texts.reduce((n, t) => n + t.length, 0);
  train.progress = [];
  train.controller = new AbortController();
  $("train-progress").value = 0;
  $("train-progress-label").textContent = "Starting the training worker…";
  $("train-progress-row").hidden = false;
  setState("training", "");
  const started = performance.now();
  try {
    const tok = await AnyTok.train(texts, opts, {
      signal: train.controller.signal,
      onProgress: (p) => showProgress(p, totalChars),
    });
    train.tok = tok;
    const t = tok.training;
    $("train-progress-row").hidden = true;
    setState("done", `Trained in ${((performance.now() - started) / 1000).toFixed(1)} s (${t.trainSeconds.toFixed(1)} s in anytok.train).`);
    showResult(tok, totalChars);
  } catch (err) {
    $("train-progress-row").hidden = true;
    if (err?.name === "AbortError") setState("cancelled", "Training cancelled.");
    else setState("error", `Training failed: ${errorText(err)}`);
  } finally {
    train.controller = null;
  }
}

function cancelTraining() {
  train.controller?.abort();
}

// --- the result -----------------------------------------------------------------------------

const STYLE_NAMES = { hf: "Hugging Face style", tiktoken: "tiktoken style" };

function showResult(tok, totalChars) {
  const t = tok.training;
  $("train-result").hidden = false;
  $("train-summary").textContent =
    `${STYLE_NAMES[t.style]}, ${fmt.format(t.nVocab)} tokens (${fmt.format(t.nMerges)} merges), ` +
    `learned from ${fmt.format(totalChars)} characters`;
  $("train-download-json").hidden = t.files.tokenizerJson === undefined;
  $("train-download-tiktoken").hidden = t.files.tiktoken === undefined;
  if (!$("train-try").value) $("train-try").value = train.files[0]?.text.slice(0, 600) ?? "";
  tryText();
}

async function tryText() {
  const tok = train.tok;
  if (!tok) return;
  const generation = ++train.tries;
  const text = $("train-try").value;
  const options = tok.kind === "encoding" ? { disallowedSpecial: [] } : {};
  try {
    const count = await tok.count(text, options);
    const pieces = await tok.tokenize(text.slice(0, TRY_LIMIT), options);
    if (generation !== train.tries || tok !== train.tok) return;
    $("train-count").textContent = fmt.format(count);
    $("train-tokens").innerHTML = pieces
      .map((p, i) => `<span class="t c${i % 6}" data-ids="${p.ids.join(" ")}" title="id ${p.ids.join(", ")}">${visible(p.text)}</span>`)
      .join("");
    $("train-view").dataset.tried = String(generation);
  } catch (err) {
    if (generation === train.tries) $("train-message").textContent = `Could not tokenize: ${errorText(err)}`;
  }
}

function download(data, fileName, type) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([data], { type }));
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

function fileStem() {
  const t = train.tok.training;
  return `${t.style}-${t.nVocab}`;
}

// --- wiring ---------------------------------------------------------------------------------

function wireDrop() {
  const zone = $("train-drop");
  const inTrain = () => document.body.dataset.view === "train";
  const hasFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes("Files");
  for (const type of ["dragenter", "dragover", "dragleave"]) {
    window.addEventListener(
      type,
      (e) => {
        if (!inTrain() || !hasFiles(e)) return;
        e.stopPropagation();
        if (type !== "dragleave") e.preventDefault();
        zone.classList.toggle("drop-target", type !== "dragleave");
      },
      { capture: true },
    );
  }
  window.addEventListener(
    "drop",
    (e) => {
      if (!inTrain()) return;
      e.stopPropagation();
      e.preventDefault();
      zone.classList.remove("drop-target");
      if (e.dataTransfer?.files?.length) addFiles(e.dataTransfer.files);
    },
    { capture: true },
  );
}

function start() {
  $("view-count").addEventListener("click", () => showView("count"));
  $("view-train").addEventListener("click", () => showView("train"));
  $("view-constrain").addEventListener("click", () => showView("constrain"));
  $("view-chat").addEventListener("click", () => showView("chat"));
  $("view-compare").addEventListener("click", () => showView("compare"));
  $("train-pick").addEventListener("click", () => $("train-files").click());
  $("train-files").addEventListener("change", (e) => {
    const files = [...(e.target.files ?? [])];
    e.target.value = "";
    addFiles(files);
  });
  $("train-clear-files").addEventListener("click", () => {
    train.files = [];
    renderFiles();
    setState("idle", "");
  });
  $("train-start").addEventListener("click", startTraining);
  $("train-cancel").addEventListener("click", cancelTraining);
  let timer = 0;
  $("train-try").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(tryText, 60);
  });
  $("train-download-atok").addEventListener("click", () =>
    download(train.tok.training.files.atok, `${fileStem()}.atok`, "application/octet-stream"));
  $("train-download-json").addEventListener("click", () =>
    download(train.tok.training.files.tokenizerJson, "tokenizer.json", "application/json"));
  $("train-download-tiktoken").addEventListener("click", () =>
    download(train.tok.training.files.tiktoken, `${fileStem()}.tiktoken`, "text/plain"));
  wireDrop();
  const params = new URLSearchParams(location.search);
  showView(VIEWS.includes(params.get("view")) ? params.get("view") : "count");
  setState("idle", "");
}

start();
