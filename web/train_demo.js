// The demo page's Train view: pick or drop text files, train a tokenizer on them with
// AnyTok.train (anytok.train in a worker of its own), watch its progress, cancel it, try the
// result on text and download it.  Kinds: byte-level BPE (.atok, tokenizer.json or .tiktoken),
// SentencePiece Unigram and BPE (.model, as spm_train writes it), tokenizers' WordPiece,
// WordLevel and Unigram (tokenizer.json).  Only the public shim.
//
// Drops are caught on the window in the capture phase while this view is shown, before the
// Count view's handlers (demo.js) see them.

import { AnyTok } from "./anytok.js";
import { markHTML } from "./visible.js";

const $ = (id) => document.getElementById(id);
const fmt = new Intl.NumberFormat("en");
const TRY_LIMIT = 20_000; // characters shown as tokens
const COUNT_SHARE = 0.3; // of the progress bar: counting, then merging
const READ_SHARE = 0.2; // of the progress bar for the other kinds: reading, then training

// The kinds the view trains: AnyTok.train's kind and style, the note shown, and the special
// tokens proposed (each kind keeps what was typed for it).
const KINDS = {
  "byte-bpe": { kind: "bpe", name: "Byte-level BPE", specials: "<|endoftext|>",
                note: "Byte-level BPE, learned by anytok.train in a Web Worker: the same merges as Hugging Face " +
                      "tokenizers' BpeTrainer or rustbpe (tiktoken style) would learn." },
  "sp-unigram": { kind: "unigram", style: "sentencepiece", name: "SentencePiece Unigram",
                  note: "A SentencePiece Unigram model, byte for byte the .model file sentencepiece's trainer " +
                        "(spm_train) writes for the same lines and options." },
  "sp-bpe": { kind: "bpe", style: "sentencepiece", name: "SentencePiece BPE",
              note: "A SentencePiece BPE model, byte for byte the .model file sentencepiece's trainer " +
                    "(spm_train) writes for the same lines and options." },
  "wordpiece": { kind: "wordpiece", style: "hf", name: "WordPiece", specials: "[PAD] [UNK] [CLS] [SEP] [MASK]",
                 note: "WordPiece as in BERT: tokenizers' WordPieceTrainer with BertNormalizer, BertPreTokenizer " +
                       "and [CLS] … [SEP] around each text; the tokenizer.json tokenizers would save." },
  "wordlevel": { kind: "wordlevel", style: "hf", name: "WordLevel", specials: "[UNK]",
                 note: "Whole words: tokenizers' WordLevelTrainer with Lowercase (optional) and Whitespace; the " +
                       "most frequent words are the vocabulary, others become [UNK]; the tokenizer.json tokenizers would save." },
  "hf-unigram": { kind: "unigram", style: "hf", name: "Unigram (tokenizers)", specials: "<unk>",
                  note: "tokenizers' UnigramTrainer (not sentencepiece's: its pruning differs) with NFKC and " +
                        "Metaspace; the tokenizer.json tokenizers would save." },
};
const PRIVACY = " Your files never leave the page.";

const train = {
  files: [], // [{ name, size, text }]
  tok: null, // the trained AnyTok
  controller: null,
  progress: [], // the reports of the current or last training
  state: "idle", // idle, reading, training, done, cancelled, error
  tries: 0, // bumped by every edit of the try box
  kind: "byte-bpe", // a key of KINDS
  specials: Object.fromEntries(Object.entries(KINDS).map(([k, v]) => [k, v.specials ?? ""])),
  ticker: 0, // the timer that shows the seconds a training step has taken
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
  for (const id of ["train-pick", "train-clear-files", "train-vocab", "train-pattern", "train-style", "train-min-frequency", "train-specials",
                    "train-kind", "train-coverage", "train-byte-fallback", "train-split-digits", "train-normalization", "train-lowercase"]) {
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

const STEPS = { normalize: "normalizing the lines", alphabet: "finding the alphabet", pieces: "learning the pieces",
                write: "writing the model" };

// How far the pieces have got, 0 to 1, or null when the step says nothing of it.  BPE learns
// pieces up to its target; Unigram's EM rounds shrink its seed pieces towards the target.
function piecesShare(p) {
  if (p.pieces === undefined || !p.target) return null;
  if (train.kind === "sp-bpe") return Math.min(1, p.pieces / p.target);
  const first = train.progress.find((q) => q.pieces !== undefined && q.target !== undefined)?.pieces ?? p.pieces;
  if (first <= p.target) return 1;
  return Math.max(0, Math.min(1, Math.log(first / p.pieces) / Math.log(first / p.target)));
}

function showProgress(p, totalChars) {
  train.progress.push(p);
  const row = $("train-progress-row");
  row.hidden = false;
  clearInterval(train.ticker);
  let fraction;
  let label;
  if (p.phase === "read") {
    fraction = READ_SHARE * (p.total ? p.chars / p.total : 1);
    label = `Reading: ${fmt.format(p.sentences)} lines, ${fmt.format(p.chars)} of ${fmt.format(p.total)} characters`;
  } else if (p.phase === "train") {
    // SentencePiece's trainers say how many pieces they have (see piecesShare); the other
    // steps say only that they run: the bar then shows it is busy.
    const step = p.finished ? "done" : STEPS[p.step] ?? p.step;
    const share = p.finished ? 1 : piecesShare(p);
    label = `Training: ${step}`;
    if (share === null) {
      $("train-progress").removeAttribute("value");
    } else {
      $("train-progress").value = READ_SHARE + (1 - READ_SHARE) * share;
      label += `, ${fmt.format(p.pieces)} pieces (${train.kind === "sp-bpe" ? "of" : "towards"} ${fmt.format(p.target)})`;
    }
    $("train-progress-label").textContent = label;
    const since = performance.now();
    if (!p.finished) {
      train.ticker = setInterval(() => {
        $("train-progress-label").textContent = `${label} · ${Math.round((performance.now() - since) / 1000)} s`;
      }, 1000);
    }
    return;
  } else if (p.phase === "count") {
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
  const { kind, style } = KINDS[train.kind];
  switch (train.kind) {
    case "byte-bpe":
      return { vocabSize, style: $("train-style").value, pattern: $("train-pattern").value, specialTokens, minFrequency };
    case "sp-unigram":
    case "sp-bpe":
      return { kind, style, vocabSize, characterCoverage: Number($("train-coverage").value),
               byteFallback: $("train-byte-fallback").checked, splitDigits: $("train-split-digits").checked,
               normalizationRuleName: $("train-normalization").value };
    case "wordpiece":
    case "wordlevel":
      return { kind, style, vocabSize, specialTokens, minFrequency, lowercase: $("train-lowercase").checked };
    default:
      return { kind, style, vocabSize, specialTokens };
  }
}

// Lines as spm_train and tokenizers' train(files) read a file: split at "\n", no final empty line.
function linesOf(text) {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

function showKind() {
  const key = $("train-kind").value;
  if (KINDS[key] === undefined) return;
  train.specials[train.kind] = $("train-specials").value;
  train.kind = key;
  $("train-view").dataset.kind = key;
  $("train-specials").value = train.specials[key];
  $("train-kind-note").textContent = KINDS[key].note + PRIVACY;
  for (const label of document.querySelectorAll("#train-view [data-kinds]")) {
    label.hidden = !label.dataset.kinds.split(" ").includes(key);
  }
}

async function startTraining() {
  if (!train.files.length || train.state === "training") return;
  const opts = options();
  const byteLevel = train.kind === "byte-bpe";
  if (byteLevel && (!Number.isInteger(opts.vocabSize) || opts.vocabSize < 256)) {
    setState("error", "The vocabulary size must be a whole number of at least 256 (it counts the 256 bytes).");
    return;
  }
  if (!Number.isInteger(opts.vocabSize) || opts.vocabSize < 1) {
    setState("error", "The vocabulary size must be a whole number, 1 or more.");
    return;
  }
  if (opts.characterCoverage !== undefined && !(opts.characterCoverage >= 0.98 && opts.characterCoverage <= 1)) {
    setState("error", "The character coverage must be between 0.98 and 1.");
    return;
  }
  if (opts.minFrequency !== undefined && (!Number.isInteger(opts.minFrequency) || opts.minFrequency < 0)) {
    setState("error", "The minimum frequency must be a whole number, 0 or more.");
    return;
  }
  const texts = byteLevel ? train.files.map((f) => f.text) : train.files.flatMap((f) => linesOf(f.text));
  const totalChars = train.files.reduce((n, f) => n + f.text.length, 0);
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
    clearInterval(train.ticker);
    $("train-progress-row").hidden = true;
    setState("done", `Trained in ${((performance.now() - started) / 1000).toFixed(1)} s (${t.trainSeconds.toFixed(1)} s in anytok.train).`);
    showResult(tok, totalChars);
  } catch (err) {
    clearInterval(train.ticker);
    $("train-progress").value = 0;
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
  const what = t.nMerges === undefined
    ? `${KINDS[train.kind].name}, ${fmt.format(t.nVocab)} tokens`
    : `${STYLE_NAMES[t.style]}, ${fmt.format(t.nVocab)} tokens (${fmt.format(t.nMerges)} merges)`;
  $("train-summary").textContent = `${what}, learned from ${fmt.format(totalChars)} characters`;
  $("train-download-model").hidden = t.files.model === undefined;
  $("train-download-atok").hidden = t.files.atok === undefined;
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
    // Text in no token (e.g. the spaces a Whitespace pre-tokenizer drops) is shown faded, as
    // the Count view shows it.
    let k = 0;
    $("train-tokens").innerHTML = pieces
      .map((p) => p.ids.length === 0 ? `<span class="gap" title="in no token">${visible(p.text)}</span>`
        : `<span class="t c${k++ % 6}" data-ids="${p.ids.join(" ")}" title="id ${p.ids.join(", ")}">${visible(p.text)}</span>`)
      .join("");
    train.triedText = text;  // (what the tokens shown are of: tests wait for the text they typed)
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
  return t.style === "sentencepiece" ? `${t.kind}-${t.nVocab}` : `${t.style}-${t.nVocab}`;
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
  $("train-kind").addEventListener("change", showKind);
  $("train-start").addEventListener("click", startTraining);
  $("train-cancel").addEventListener("click", cancelTraining);
  let timer = 0;
  $("train-try").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(tryText, 60);
  });
  $("train-download-model").addEventListener("click", () =>
    download(train.tok.training.files.model, `${fileStem()}.model`, "application/octet-stream"));
  $("train-download-atok").addEventListener("click", () =>
    download(train.tok.training.files.atok, `${fileStem()}.atok`, "application/octet-stream"));
  $("train-download-json").addEventListener("click", () =>
    download(train.tok.training.files.tokenizerJson, "tokenizer.json", "application/json"));
  $("train-download-tiktoken").addEventListener("click", () =>
    download(train.tok.training.files.tiktoken, `${fileStem()}.tiktoken`, "text/plain"));
  wireDrop();
  showKind();
  const params = new URLSearchParams(location.search);
  showView(VIEWS.includes(params.get("view")) ? params.get("view") : "count");
  setState("idle", "");
}

start();
