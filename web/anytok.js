// anytok in the browser: tiktoken-exact token ids, computed by anytok (pure Python) under
// Pyodide in a Web Worker, so the page never freezes.
//
//   import { AnyTok } from "/anytok.js";
//   const tok = await AnyTok.load({ encoding: "o200k_base" });
//   await tok.count("hello world");        // 2
//   await tok.encode("hello world");       // [24912, 2375]
//   await tok.decode([24912, 2375]);       // "hello world"
//
// Any tokenizer file anytok reads loads the same way, converted in the worker: a Hugging Face
// tokenizer.json, a SentencePiece .model, a Mistral tekken .json, an anytok .atok, or the
// tokenizer in a GGUF model file (llama.cpp's ids).
//   const llama = await AnyTok.load({ url: "/models/llama3/tokenizer.json" });
//   const mine = await AnyTok.load({ file });   // a File or Blob; a GGUF model file: its header only
//   await llama.encode("hello", { addSpecialTokens: true });   // with BOS, as HF's default
//   const atok = await llama.toAtok();                          // Uint8Array: save it, load it faster
//
// Training (anytok.train, in a worker of its own; aborting the signal terminates that worker):
//   const mine = await AnyTok.train(texts, { vocabSize: 8192, style: "hf" }, { onProgress, signal });
//   await mine.encode("hello");  mine.training.files.tokenizerJson;  mine.training.files.atok;
//   const spm = await AnyTok.train(lines, { kind: "unigram", vocabSize: 8000, byteFallback: true });
//   spm.training.files.model;   // the .model bytes sentencepiece's trainer writes (each line a sentence)
//   (await AnyTok.train(lines, { kind: "wordpiece", vocabSize: 30000 })).training.files.tokenizerJson;
//
// Every URL defaults to a file next to this module (as laid out by build_scripts/build_web.py)
// and can be overridden: see anytok.d.ts for the options and their meaning.

const MODULE_BASE = new URL(".", import.meta.url);
const MANIFEST = "anytok-assets.json";

/** A failure in anytok: a Python exception (pythonType set) or a loading problem. */
export class AnyTokError extends Error {
  constructor(message, { pythonType = null, traceback = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "AnyTokError";
    this.pythonType = pythonType;
    this.traceback = traceback;
  }
}

// A Python exception from the worker, in this API's words: its message names the JS options
// (allowedSpecial, not Python's allowed_special); the Python traceback is kept in `cause` (and
// `traceback`), never in the message.
function workerError(error) {
  let message = error.message;
  const special = /^Encountered text corresponding to disallowed special token (['"])(.*)\1\.(?:\n|$)/s.exec(message);
  if (special) {
    const token = JSON.stringify(special[2].replace(/\\(.)/g, "$1"));
    message = `Encountered text corresponding to disallowed special token ${token}. Pass ` +
      `{ allowedSpecial: [${token}] } (or "all") to encode it as that special token, or ` +
      `{ disallowedSpecial: [] } to encode it as plain text.`;
  }
  const cause = error.traceback ? Object.assign(new Error(error.traceback), { name: error.pythonType ?? "PythonError" }) : undefined;
  return new AnyTokError(message, { pythonType: error.pythonType, traceback: error.traceback, cause });
}

// --- the worker -----------------------------------------------------------------------------

// Node (>= 20) has no DOM-style Worker: there anytok runs worker.js in a `worker_threads` Worker
// (through node_worker.mjs, next to worker.js) and reads its files from the package folder.
const IN_NODE = typeof Worker === "undefined" && typeof globalThis.process?.versions?.node === "string";
// (A computed specifier, so that a bundler for the browser leaves Node's modules alone.)
const nodeModule = (name) => import(/* @vite-ignore */ /* webpackIgnore: true */ `node:${name}`);

// A `worker_threads` Worker behind the Web Worker interface Runtime uses (postMessage,
// onmessage/onerror/onmessageerror, terminate).  Messages wait until it has started.  It keeps
// Node's process alive only while an answer is awaited (`hold`), so a script that is done exits
// without `AnyTok.terminate()`.
class NodeWorker {
  constructor(url) {
    this.onmessage = this.onerror = this.onmessageerror = null;
    this.worker = null;
    this.waiting = [];
    this.held = false;
    this.ended = false;
    nodeModule("worker_threads").then(({ Worker: ThreadWorker }) => {
      if (this.ended) return;
      const worker = new ThreadWorker(new URL("node_worker.mjs", url), { workerData: { workerURL: url }, name: "anytok" });
      worker.on("message", (data) => this.onmessage?.({ data }));
      worker.on("messageerror", () => this.onmessageerror?.());
      worker.on("error", (err) => this.onerror?.({ message: err?.message ?? String(err) }));
      worker.on("exit", (code) => {
        if (!this.ended) this.onerror?.({ message: `its thread exited (code ${code})` });
      });
      if (!this.held) worker.unref();
      this.worker = worker;
      for (const [message, transfer] of this.waiting) worker.postMessage(message, transfer);
      this.waiting = [];
    }).catch((err) => this.onerror?.({ message: `worker_threads: ${err.message}` }));
  }

  postMessage(message, transfer = []) {
    if (this.worker) this.worker.postMessage(message, transfer);
    else this.waiting.push([message, transfer]);
  }

  hold(on) {
    this.held = on;
    if (this.worker) on ? this.worker.ref() : this.worker.unref();
  }

  terminate() {
    this.ended = true;
    this.worker?.terminate();
  }
}

function newWorker(url) {
  return IN_NODE ? new NodeWorker(url) : new Worker(url, { type: "module", name: "anytok" });
}

// One Web Worker per set of runtime URLs, shared by every encoding loaded with them.
const runtimes = new Map();

class Runtime {
  // vocab (Node only): the bundled encoding this runtime is made to load first, which worker.js
  // then keeps in the start-up snapshot it stores on disk.
  constructor(urls, vocab = null) {
    this.urls = urls;
    this.pending = new Map();
    this.nextId = 1;
    this.encodings = new Map(); // key -> Promise of info
    this.decodeTables = new Map(); // key -> Promise of its ByteTable (or null), made on first decode
    this.dead = null;
    this.worker = takeSpare(urls.workerURL) ?? newWorker(urls.workerURL);
    this.worker.onmessage = ({ data }) => {
      if (data.download !== undefined) {
        // A file the worker fetches while it starts (worker.js): for AnyTok.onDownload.
        try {
          AnyTok.onDownload?.(data.download);
        } catch (err) {
          console.error(err);
        }
        return;
      }
      const request = this.pending.get(data.id);
      if (!request) return;
      if (data.progress !== undefined) {
        // A long request's report while it runs (train); the answer comes later.
        try {
          request.onProgress?.(data.progress);
        } catch (err) {
          console.error(err);
        }
        return;
      }
      this.pending.delete(data.id);
      if (this.pending.size === 0) this.worker.hold?.(false);
      if (data.ok) request.resolve(data.result);
      else request.reject(workerError(data.error));
    };
    // A worker that cannot start (bad URL, syntax error) would otherwise leave every request
    // waiting forever.
    this.worker.onerror = (event) => {
      event.preventDefault?.();
      this.fail(new AnyTokError(`anytok worker ${urls.workerURL} failed: ${event.message || "could not be started"}`));
    };
    this.worker.onmessageerror = () => this.fail(new AnyTokError("anytok worker: a message could not be read"));
    const early = spareErrors.get(this.worker); // a spare that failed before it was taken
    if (early) this.worker.onerror(early);
    this.ready = this.call("init", { pyodideURL: urls.pyodideURL, stdlibURL: urls.stdlibURL, wheelURL: urls.wheelURL, glueURL: urls.glueURL,
                                     gluePycURL: urls.gluePycURL, snapshot: urls.snapshot, lazyParts: urls.lazyParts,
                                     pyodideLock: urls.pyodideLock, ...(vocab ? { vocab } : {}) });
    // A worker whose start failed is dropped, so that a later load starts afresh.
    this.ready.catch((err) => this.terminate(err));
  }

  call(op, args, transfer = [], onProgress = null) {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      if (this.pending.size === 0) this.worker.hold?.(true);
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, op, args }, transfer);
    });
  }

  fail(error) {
    this.dead ??= error;
    this.decodeTables.clear();
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
    this.worker?.hold?.(false);
  }

  terminate(reason = new AnyTokError("anytok worker was terminated")) {
    this.fail(reason);
    this.worker.terminate();
  }
}

// The options every training takes besides its own: where the runtime's files are.
const URL_OPTIONS = new Set(["baseURL", "manifestURL", "workerURL", "pyodideURL", "stdlibURL", "wheelURL", "glueURL", "snapshot"]);
// The kinds and styles `trainKind` trains, with each kind's default style.
const KIND_STYLES = {
  unigram: ["sentencepiece", "hf"], bpe: ["sentencepiece"], char: ["sentencepiece"], word: ["sentencepiece"],
  wordpiece: ["hf"], wordlevel: ["hf"],
};

// AnyTok.train of a kind other than byte-level BPE: SentencePiece models (anytok.train with
// style "sentencepiece": `.model` bytes as sentencepiece's trainer writes them) and tokenizers'
// WordPiece, WordLevel and Unigram trainers (anytok.hf: tokenizer.json).  Each of `texts` is one
// sentence (sentencepiece's sentence_iterator, tokenizers' train_from_iterator): split a file at
// "\n" to train on it as spm_train and tokenizers' `train(files)` read it.  The options besides
// kind, style, name and the URLs go to the trainer as they are (worker_glue.py's train_kind
// names them); the worker rejects unknown ones.
async function trainKind(texts, options, { onProgress, signal }) {
  const { kind, name = "trained", ...rest } = options;
  const styles = KIND_STYLES[kind];
  if (!styles) throw new TypeError(`anytok: kind must be one of bpe, ${Object.keys(KIND_STYLES).join(", ")}; not ${JSON.stringify(kind)}`);
  const style = rest.style ?? styles[0];
  delete rest.style;
  if (!styles.includes(style)) throw new TypeError(`anytok: kind "${kind}" is trained with style ${styles.map((s) => `"${s}"`).join(" or ")}, not ${JSON.stringify(style)}`);
  if (!Number.isInteger(rest.vocabSize) || rest.vocabSize <= 0) throw new TypeError("anytok: vocabSize must be a positive integer");
  if (typeof name !== "string" || !name) throw new TypeError("anytok: name must be a non-empty string");
  const urlOptions = {};
  const trainerOptions = { kind, style };
  for (const [key, value] of Object.entries(rest)) {
    if (URL_OPTIONS.has(key)) urlOptions[key] = value;
    // (a charsmap's bytes travel as numbers: the options go as JSON)
    else trainerOptions[key] = value instanceof Uint8Array ? Array.from(value) : value;
  }
  signal?.throwIfAborted();
  const { manifest, manifestURL } = await manifestFor(urlOptions);
  const names = Object.keys(manifest.encodings).sort();
  const urls = resolveURLs(urlOptions, manifest, manifestURL);
  signal?.throwIfAborted();

  const result = await trainInWorker(urls, signal, "trainKind", { texts, options: trainerOptions }, onProgress);

  // The trained tokenizer goes to the page's worker, as AnyTok.train's byte-level BPE does.
  const runtime = runtimeFor(urls);
  runtime.info ??= await runtime.ready;
  const key = `trained ${++customCount}`;
  const files = {};
  let bytes;
  let fileName;
  if (result.model !== undefined) {
    files.model = result.model;
    bytes = result.model.slice();
    fileName = `${name}.model`;
  } else {
    files.tokenizerJson = result.tokenizerJson;
    bytes = new TextEncoder().encode(result.tokenizerJson);
    fileName = `${name}.json`;
  }
  const info = await runtime.call("load", { key, name: null, url: null, sha256: null, bytes, fileName }, [bytes.buffer]);
  const training = Object.freeze({
    kind, style, nVocab: info.nVocab, trainSeconds: result.trainSeconds, files: Object.freeze(files),
  });
  return new AnyTok(runtime, key, { ...info, training }, names, info.methods ?? runtime.info.methods);
}

// Training runs in workers of their own: Python cannot read a cancel message while it trains,
// so cancelling terminates the worker (see worker.js), and that must not take the page's
// tokenizers with it.  An idle training worker is reused; one is kept for the next training.
const trainers = new Set();

function trainerFor(urls) {
  for (const runtime of trainers) {
    if (runtime.dead) trainers.delete(runtime);
    else if (runtime.pending.size === 0 && runtime.urls.workerURL === urls.workerURL
             && runtime.urls.pyodideURL === urls.pyodideURL && runtime.urls.stdlibURL === urls.stdlibURL
             && runtime.urls.wheelURL === urls.wheelURL && runtime.urls.snapshot === urls.snapshot
             && runtime.urls.glueURL === urls.glueURL) return runtime;
  }
  const runtime = new Runtime(urls);
  trainers.add(runtime);
  return runtime;
}

function retireTrainer(runtime) {
  // Keep at most one idle training worker.
  const idle = [...trainers].filter((r) => !r.dead && r.pending.size === 0);
  if (idle.length > 1 && idle.includes(runtime)) {
    trainers.delete(runtime);
    runtime.terminate();
  }
}

// One training call (`op` of worker.js) in a training worker; `signal`'s abort terminates that
// worker, which rejects the call with the signal's reason.
async function trainInWorker(urls, signal, op, args, onProgress) {
  const trainer = trainerFor(urls);
  const abort = () => {
    trainers.delete(trainer);
    trainer.terminate(signal.reason ?? new AnyTokError("anytok: training was cancelled"));
  };
  signal?.addEventListener("abort", abort, { once: true });
  let result;
  try {
    trainer.info ??= await trainer.ready;
    result = await trainer.call(op, args, [], onProgress ?? null);
  } finally {
    signal?.removeEventListener("abort", abort);
  }
  retireTrainer(trainer);
  return result;
}

// A worker started by `load` before the manifest has come (workerURL -> Worker): its module
// loads while the manifest is fetched, and the Runtime made for that URL takes it.  A load that
// fails before it makes its Runtime terminates the worker it started.
const spares = new Map();
const spareErrors = new WeakMap(); // spare -> its error event, if it came before a Runtime took it

function startSpare(options) {
  try {
    if (typeof Worker === "undefined") return null;
    const url = new URL(options.workerURL ?? "worker.js", manifestURLOf(options)).href;
    const running = (r) => !r.dead && r.urls.workerURL === url;
    if (spares.has(url) || [...runtimes.values()].some(running)) return null;
    const worker = new Worker(url, { type: "module", name: "anytok" });
    worker.onerror = (event) => {
      event.preventDefault?.();
      spareErrors.set(worker, event);
    };
    spares.set(url, worker);
    return { url, worker };
  } catch {
    return null; // (a bad baseURL or manifestURL: manifestFor reports it)
  }
}

function takeSpare(url) {
  const worker = spares.get(url) ?? null;
  spares.delete(url);
  return worker;
}

function dropSpare(spare) {
  if (spare && spares.get(spare.url) === spare.worker) {
    spares.delete(spare.url);
    spare.worker.terminate();
  }
}

// index > 0: the extra workers of `load({ workers })`, shared by the tokenizers that ask for as many.
function runtimeFor(urls, index = 0, vocab = null) {
  const key = JSON.stringify([urls.workerURL, urls.pyodideURL, urls.stdlibURL, urls.wheelURL, urls.glueURL, urls.snapshot, index]);
  let runtime = runtimes.get(key);
  if (!runtime || runtime.dead) {
    runtime = new Runtime(urls, vocab);
    runtimes.set(key, runtime);
  }
  return runtime;
}

// --- assets ---------------------------------------------------------------------------------

const manifests = new Map();

function fetchManifest(url) {
  if (!manifests.has(url)) {
    const read = IN_NODE && url.startsWith("file:")
      ? nodeModule("fs/promises").then(({ readFile }) => readFile(new URL(url))).then((bytes) => JSON.parse(bytes.toString("utf8")))
      : fetch(url).then((response) => {
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        return response.json();
      });
    const promise = read
      .catch((err) => {
        manifests.delete(url);
        throw new AnyTokError(`anytok: could not read ${url}: ${err.message}`);
      });
    manifests.set(url, promise);
  }
  return manifests.get(url);
}

function resolveURLs(options, manifest, manifestURL) {
  const at = (value, fallback) => new URL(value ?? fallback, manifestURL).href;
  const dir = (url) => (url.endsWith("/") ? url : `${url}/`);
  return {
    workerURL: at(options.workerURL, "worker.js"),
    pyodideURL: dir(at(options.pyodideURL, manifest.pyodideURL)),
    // null: the stock (uncompiled) standard library in pyodideURL.
    stdlibURL: options.stdlibURL === null || (options.stdlibURL ?? manifest.stdlibURL) == null
      ? null : at(options.stdlibURL, manifest.stdlibURL),
    wheelURL: at(options.wheelURL, manifest.wheelURL),
    glueURL: at(options.glueURL, manifest.glueURL),
    // The manifest's glue compiled; a page's own glue is compiled from its source.
    gluePycURL: options.glueURL == null && manifest.gluePycURL ? at(undefined, manifest.gluePycURL) : null,
    // Not a URL, but part of what makes a worker: whether it starts from a memory snapshot.
    snapshot: options.snapshot !== false,
    // The rest of the standard library and of anytok, fetched when Python first imports a module
    // of theirs (the manifest lists them; a manifest without them: the first download holds all).
    lazyParts: (manifest.lazyParts ?? []).map((part) => ({ ...part, url: at(undefined, part.url) })),
    // Pyodide's lock file without its packages (none is ever loaded), for the manifest's own
    // Pyodide only: another one reads its own pyodide-lock.json.
    pyodideLock: options.pyodideURL == null ? manifest.pyodideLock ?? null : null,
  };
}

function manifestURLOf(options) {
  const base = options.baseURL ? new URL(options.baseURL, globalThis.location?.href) : MODULE_BASE;
  return new URL(options.manifestURL ?? MANIFEST, base).href;
}

async function manifestFor(options) {
  const manifestURL = manifestURLOf(options);
  return { manifest: await fetchManifest(manifestURL), manifestURL };
}

// --- text <-> tokens ------------------------------------------------------------------------

function checkText(text, what = "text") {
  if (typeof text !== "string") throw new TypeError(`anytok: ${what} must be a string, not ${text === null ? "null" : typeof text}`);
}

function specialOptions(options = {}) {
  if (options.addSpecialTokens !== undefined && typeof options.addSpecialTokens !== "boolean") {
    throw new TypeError("anytok: addSpecialTokens must be true or false");
  }
  const check = (value, name) => {
    if (value === undefined || value === "all" || (Array.isArray(value) && value.every((v) => typeof v === "string"))) return value;
    if (value instanceof Set) return [...value];
    throw new TypeError(`anytok: ${name} must be "all" or an array of special token strings`);
  };
  return {
    allowedSpecial: check(options.allowedSpecial, "allowedSpecial"),
    disallowedSpecial: check(options.disallowedSpecial, "disallowedSpecial"),
    addSpecialTokens: options.addSpecialTokens,
  };
}

// encode's { ids, offsets } from the worker's flat Int32Array: id, start, end per token.
function idsAndOffsets(flat) {
  const n = flat.length / 3;
  const ids = new Array(n);
  const offsets = new Array(n);
  for (let i = 0, t = 0; i < n; i++, t += 3) {
    ids[i] = flat[t];
    offsets[i] = [flat[t + 1], flat[t + 2]];
  }
  return { ids, offsets };
}

// Group tokens into pieces of the text by their offsets (the worker's tokenize: id, start, end,
// byte length per token; the offsets are encode's exact ones, for every format).  Most pieces
// are one token; tokens whose spans overlap (a character whose UTF-8 bytes are split between
// tokens, or one a normalizer turned into several tokens) make one piece.  Text no token covers
// (what a normalizer removed) is a piece of no ids.  A token that stands for no text (a BOS the
// tokenizer adds) joins the next piece (tokens after the text, an EOS, the last one).
function piecesOf(text, flat) {
  const exact = true; // kept in each piece for code written when some formats had no offsets
  const pieces = [];
  let at = 0; // where the next piece starts
  let cur = null;
  let pending = { ids: [], lengths: [] }; // tokens of no text, for the next piece
  const close = () => {
    if (!cur) return;
    pieces.push({ text: text.slice(cur.start, cur.end), ids: cur.ids, start: cur.start, end: cur.end, byteLengths: cur.lengths, exact });
    at = cur.end;
    cur = null;
  };
  for (let t = 0; t < flat.length; t += 4) {
    const [id, start, end, bytes] = [flat[t], flat[t + 1], flat[t + 2], flat[t + 3]];
    if (end <= start) {
      // Inside the current piece: one of its tokens; at its end (SentencePiece gives the
      // first bytes of a byte-fallback character an empty span at the character's start):
      // a token of the next piece.
      const into = cur && start < cur.end ? cur : pending;
      into.ids.push(id);
      into.lengths.push(bytes);
      continue;
    }
    if (cur && start < cur.end) {
      cur.ids.push(...pending.ids, id);
      cur.lengths.push(...pending.lengths, bytes);
      pending = { ids: [], lengths: [] };
      cur.end = Math.max(cur.end, end);
      continue;
    }
    close();
    if (start > at) pieces.push({ text: text.slice(at, start), ids: [], start: at, end: start, byteLengths: [], exact });
    cur = { start: Math.max(start, at), end, ids: [...pending.ids, id], lengths: [...pending.lengths, bytes] };
    pending = { ids: [], lengths: [] };
  }
  close();
  if (at < text.length) pieces.push({ text: text.slice(at), ids: [], start: at, end: text.length, byteLengths: [], exact });
  if (pending.ids.length) {
    const last = [...pieces].reverse().find((p) => p.ids.length);
    if (last) {
      last.ids.push(...pending.ids);
      last.byteLengths.push(...pending.lengths);
    } else {
      pieces.push({ text: "", ids: pending.ids, start: at, end: at, byteLengths: pending.lengths, exact });
    }
  }
  return pieces;
}

// --- decoding in the page -------------------------------------------------------------------
//
// A tiktoken-style encoding decodes by joining its tokens' bytes and reading them as UTF-8
// (invalid bytes -> U+FFFD, as Python's errors="replace").  The worker sends every token's
// bytes once (worker_glue.decode_table, on the first decode); from then on decode runs here,
// without a round trip to the worker or Python.

// ignoreBOM: a leading U+FEFF is text, as in Python's decode.  Not fatal: invalid UTF-8 becomes
// one U+FFFD per maximal subpart (the WHATWG decoder), which is exactly Python's "replace".
const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

// Ids as an Int32Array, or a TypeError for the first value that is no id (as the worker path
// has always done).
function tokenIds(ids) {
  const check = (id) => {
    if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff) throw new TypeError(`anytok: ${id} is not a token id`);
    return id;
  };
  if (!Array.isArray(ids)) return Int32Array.from(ids, check);
  const out = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = check(ids[i]);
  return out;
}

class ByteTable {
  constructor({ bytes, offsets, empty }) {
    this.bytes = bytes; // Uint8Array: every token's bytes, in id order
    this.offsets = offsets; // Uint32Array, n_vocab + 1: token i is bytes[offsets[i], offsets[i + 1])
    // An id of no bytes is no token (a hole), unless it is one of these tokens of no bytes.
    this.empty = new Set(empty);
  }

  // The error Python's decode gives the worker path for an id that is no token.
  static unknown(id) {
    const message = `'Invalid token for decoding: ${id}'`;
    return new AnyTokError(message, { pythonType: "KeyError", traceback: `KeyError: ${message}` });
  }

  decode(ids) {
    const { bytes, offsets, empty } = this;
    const n = offsets.length - 1;
    let total = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (id >= n) throw ByteTable.unknown(id);
      const size = offsets[id + 1] - offsets[id];
      if (size === 0 && !empty.has(id)) throw ByteTable.unknown(id);
      total += size;
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      let from = offsets[id];
      const to = offsets[id + 1];
      if (to - from > 24) {
        out.set(bytes.subarray(from, to), at);
        at += to - from;
      } else {
        while (from < to) out[at++] = bytes[from++];
      }
    }
    return UTF8.decode(out);
  }
}

// --- several workers on one text ------------------------------------------------------------
//
// anytok.stream's windows: each worker splits its block plus the start of the next (OVERLAP
// code units) and reports the piece starts near both ends with the tokens before each; two
// consecutive blocks join at the first boundary both report (the worker_glue `window` docs and
// stream.py's docstring say why that is exact).  No shared boundary (one piece longer than the
// overlap): null, and the text goes to one worker.

const PARALLEL_MIN = 1 << 17; // characters (UTF-16 units) from which a text is shared out
// 4 Ki: the worker reports at most 256 piece starts at each end (stream.REPORTED), which real
// text fills in ~1-2 Ki characters; what the overlap holds past them is split for nothing.  A
// piece longer than that (a long run of spaces at the cut) makes no shared boundary: one worker.
const OVERLAP = 1 << 12;

const NON_ASCII = /[^\0-\x7f]/;

// UTF-8 bytes of one UTF-16 unit (a surrogate pair's 4 bytes are 2 + 2).
function unitBytes(c) {
  return c < 0x80 ? 1 : c < 0x800 || (c >= 0xd800 && c < 0xe000) ? 2 : 3;
}

// Where to cut `text` into n blocks of about equal UTF-8 size (the work follows the bytes more
// than the characters: Japanese text with ASCII runs would leave one worker idle otherwise).
function cutPoints(text, n) {
  if (!NON_ASCII.test(text)) {
    // One byte per unit: the same cuts as below, without a pass over the text in JS.
    const cuts = [0];
    for (let i = 1; i < n; i++) {
      const c = Math.ceil((text.length * i) / n);
      if (c > cuts[cuts.length - 1] && c < text.length) cuts.push(c);
    }
    cuts.push(text.length);
    return cuts;
  }
  let total = 0;
  for (let i = 0; i < text.length; i++) total += unitBytes(text.charCodeAt(i));
  const cuts = [0];
  let bytes = 0;
  let pos = 0;
  for (let i = 1; i < n; i++) {
    const goal = (total * i) / n;
    while (pos < text.length && bytes < goal) bytes += unitBytes(text.charCodeAt(pos++));
    let c = pos;
    const hi = text.charCodeAt(c - 1);
    const lo = text.charCodeAt(c);
    if (hi >= 0xd800 && hi < 0xdc00 && lo >= 0xdc00 && lo < 0xe000) c++; // keep a surrogate pair whole
    if (c > cuts[cuts.length - 1] && c < text.length) cuts.push(c);
  }
  cuts.push(text.length);
  return cuts;
}

// For each window after the first: [position in the previous window's ids where it stops,
// position in this window's ids where it takes over], or null if they share no boundary.
function joins(windows) {
  const out = [];
  for (let k = 1; k < windows.length; k++) {
    const prev = windows[k - 1];
    const w = windows[k];
    const heads = new Map();
    for (let i = 0; i < w.headOffsets.length; i++) heads.set(w.headOffsets[i], w.headCounts[i]);
    let found = null;
    for (let j = 0; j < prev.tailOffsets.length && found === null; j++) {
      const at = heads.get(prev.tailOffsets[j]);
      if (at !== undefined) found = [prev.tailCounts[j], at];
    }
    if (found === null) return null;
    out.push(found);
  }
  return out;
}

function joinIds(windows) {
  const links = joins(windows);
  if (links === null) return null;
  const spans = windows.map((w, k) => [k ? links[k - 1][1] : 0, k < links.length ? links[k][0] : w.ids.length]);
  const out = new Array(spans.reduce((n, [a, b]) => n + b - a, 0));
  let at = 0;
  windows.forEach((w, k) => {
    const [a, b] = spans[k];
    for (let i = a; i < b; i++) out[at++] = w.ids[i];
  });
  return out;
}

// A typed array's values as a plain Array: a loop into an Array made at its length takes V8 a
// fifth of the time of Array.from on a typed array (~1 ms against ~5.6 for 220k ids).
function arrayOf(typed) {
  const out = new Array(typed.length);
  for (let i = 0; i < typed.length; i++) out[i] = typed[i];
  return out;
}

function joinCounts(windows) {
  const links = joins(windows);
  if (links === null) return null;
  let count = 0;
  let start = 0;
  windows.forEach((w, k) => {
    const stop = k < links.length ? links[k][0] : w.total;
    count += stop - start;
    if (k < links.length) start = links[k][1];
  });
  return count;
}

// --- the public API -------------------------------------------------------------------------

/**
 * One tokenizer, in a worker that may serve others too.  Made by `AnyTok.load`: a bundled
 * encoding, or any file anytok reads (an .atok, a tokenizer.json, a SentencePiece .model, a
 * tekken .json).
 */
export class AnyTok {
  /** Called with { url, loaded, total, done } as each file a worker fetches comes in. */
  static onDownload = null;

  #runtime;
  #key;
  #names;
  #helpers;
  #sharedCalls = 0;

  constructor(runtime, key, info, names, methods, helpers = []) {
    this.#runtime = runtime;
    this.#key = key;
    this.#names = names;
    this.#helpers = helpers; // [runtime, key] of the extra workers (load's `workers`)
    this.workers = 1 + helpers.length;
    this.name = info.name;
    this.kind = info.kind;
    this.nVocab = info.nVocab;
    this.maxTokenValue = info.maxTokenValue;
    this.specialTokens = info.specialTokens;
    this.source = info.source;
    this.loadMs = info.loadMs;
    // Whether applyChatTemplate has a template: a tokenizer.json loaded with a
    // tokenizer_config.json that holds one (load's `config`).
    this.hasChatTemplate = info.chatTemplate ?? false;
    this.runtimeInfo = runtime.info;
    // Tiktoken-style encodings: the split pattern (a regex); null for other kinds.
    this.pattern = info.pattern ?? null;
    // Tokenizers made by AnyTok.train: what was trained, and the files to download.
    this.training = info.training ?? null;
    // Methods newer versions of anytok have, on its Encoding only: present here exactly when the
    // loaded tokenizer has them.
    const count = (value, what, least) => {
      if (!Number.isInteger(value) || value < least) throw new TypeError(`anytok: ${what} must be an integer >= ${least}`);
    };
    if (methods.includes("count_till_limit")) {
      this.countTillLimit = async (text, limit) => {
        checkText(text);
        count(limit, "limit", 0);
        return this.#call("countTillLimit", { text, limit });
      };
    }
    if (methods.includes("chunks")) {
      this.chunks = async (text, maxTokens, options = {}) => {
        checkText(text);
        count(maxTokens, "maxTokens", 1);
        const overlap = options.overlap ?? 0;
        count(overlap, "overlap", 0);
        return this.#call("chunks", { text, maxTokens, overlap });
      };
    }
    if (methods.includes("split_by_tokens")) {
      this.splitByTokens = async (text, maxTokens) => {
        checkText(text);
        count(maxTokens, "maxTokens", 0);
        return this.#call("splitByTokens", { text, maxTokens });
      };
    }
    Object.freeze(this);
  }

  /**
   * Load a tokenizer: `await AnyTok.load({ encoding: "o200k_base" })`, or any tokenizer file
   * anytok reads: `AnyTok.load({ url: "tokenizer.json" })`, `AnyTok.load({ data: bytes })`.
   * Starts the worker and Pyodide on first use; later loads with the same URLs share that worker.
   */
  static async load(options = {}) {
    // The worker starts now, not once the manifest is here (~15 ms of a second visit's start).
    const spare = startSpare(options);
    try {
      return await AnyTok.#load(options);
    } finally {
      dropSpare(spare); // unless a Runtime took it
    }
  }

  static async #load(options) {
    const { manifest, manifestURL } = await manifestFor(options);
    const names = Object.keys(manifest.encodings).sort();
    let request;
    const sources = ["vocab", "url", "data", "file"].filter((k) => options[k] !== undefined);
    if (sources.length > 1) throw new TypeError(`anytok: give one of vocab, url, data and file, not ${sources.join(" and ")}`);
    if (options.file !== undefined) {
      request = await fileVocab(options);
    } else if (sources.length) {
      request = await customVocab(options, manifestURL);
    } else {
      const name = options.encoding;
      if (typeof name !== "string" || name === "") {
        throw new AnyTokError(`anytok: no encoding given; pass { encoding: "o200k_base" } (bundled: ${names.join(", ")})`);
      }
      const entry = manifest.encodings[name];
      if (!entry) throw new AnyTokError(`anytok: unknown encoding "${name}". Bundled encodings: ${names.join(", ")}`);
      const url = options.vocabURL ? new URL(options.vocabURL, manifestURL).href : new URL(entry.url, manifestURL).href;
      request = { key: `${name} ${url}`, name, url, sha256: options.vocabURL ? null : entry.sha256 };
      // An encoding made from another one's file (o200k_harmony from o200k_base.atok).
      if (entry.derive && !options.vocabURL) request.derive = entry.derive;
    }
    if (options.config !== undefined) {
      // A tokenizer_config.json for applyChatTemplate: a tokenizer of its own (its own key).
      request.config = configText(options.config);
      request.key = `${request.key} config ${++customCount}`;
    }
    const workers = options.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1) throw new TypeError("anytok: workers must be an integer >= 1");
    const urls = resolveURLs(options, manifest, manifestURL);
    // The request goes out at once, so that the worker reads a cached vocabulary while Python
    // starts; it is handled after the start (a failed start rejects it too).
    const loadIn = async (runtime) => {
      let loading = runtime.encodings.get(request.key);
      if (!loading || request.bytes) {
        runtime.decodeTables.delete(request.key); // the tokenizer under that key is replaced
        loading = runtime.call("load", request);
        runtime.encodings.set(request.key, loading);
        loading.catch(() => runtime.encodings.delete(request.key));
      }
      runtime.info ??= await runtime.ready;
      return loading;
    };
    // Under Node, a new worker is told which bundled encoding comes first: its start-up snapshot
    // then holds it (worker.js's `preloaded`), and a later process skips its load.
    const first = IN_NODE && request.name && request.sha256 && !request.bytes && request.config === undefined
      ? { key: request.key, name: request.name, url: request.url, sha256: request.sha256, derive: request.derive ?? null } : null;
    const runtime = runtimeFor(urls, 0, first);
    const extra = [];
    for (let i = 1; i < workers; i++) extra.push(runtimeFor(urls, i));
    // The extra workers boot while the first loads; only tiktoken-style encodings use them.
    // One that cannot start or load (out of memory, a failed download) is left out, with a
    // warning: the tokenizer then runs on fewer workers (its `workers` says how many), with
    // the same ids.  Only the first worker's failure rejects the load.
    const started = extra.map((r) => r.ready.catch(() => null));
    const info = await loadIn(runtime);
    const helpers = [];
    if (extra.length && info.kind === "encoding") {
      await Promise.all(started);
      const loaded = await Promise.allSettled(extra.map(loadIn));
      loaded.forEach((outcome, i) => {
        if (outcome.status === "fulfilled") helpers.push([extra[i], request.key]);
        else console.warn(`anytok: extra worker ${i + 1} of ${workers - 1} left out: ${outcome.reason?.message ?? outcome.reason}`);
      });
    }
    return new AnyTok(runtime, request.key, info, names, info.methods ?? runtime.info.methods, helpers);
  }

  /** Names of the bundled encodings (no worker needed). */
  static async encodings(options = {}) {
    const { manifest } = await manifestFor(options);
    return Object.keys(manifest.encodings).sort();
  }

  /** Stop every worker this module started; tokenizers made before then stop working. */
  static terminate() {
    for (const runtime of runtimes.values()) runtime.terminate();
    runtimes.clear();
    for (const runtime of trainers) runtime.terminate();
    trainers.clear();
  }

  /**
   * Train a byte-level BPE tokenizer on `texts` (strings) with anytok.train, in a worker of its
   * own: `await AnyTok.train(texts, { vocabSize: 8192, style: "hf" }, { onProgress, signal })`.
   * With `kind`, another kind (see `trainKind`): `{ kind: "unigram", style: "sentencepiece",
   * vocabSize: 8000, ... }` gives the .model file sentencepiece's trainer writes, `{ kind:
   * "wordpiece", vocabSize: 30000 }` the tokenizer.json of tokenizers' WordPieceTrainer (`kind:
   * "wordlevel"`: its WordLevelTrainer).
   * Resolves to a tokenizer like those of `load` (encode, count, decode, ...), with
   * `training.files` to download; aborting `signal` terminates the training worker and rejects
   * with the signal's reason.
   */
  static async train(texts, options = {}, { onProgress, signal } = {}) {
    if (!Array.isArray(texts) || !texts.every((t) => typeof t === "string")) {
      throw new TypeError("anytok: texts must be an array of strings");
    }
    if (options.kind !== undefined && !(options.kind === "bpe" && (options.style ?? "hf") !== "sentencepiece")) {
      return trainKind(texts, options, { onProgress, signal });
    }
    const { kind: _bpe, vocabSize, style = "hf", pattern = "o200k_base", specialTokens = [], minFrequency = 0,
            maxTokenLength = null, name = "trained", ...urlOptions } = options;
    if (!Number.isInteger(vocabSize) || vocabSize < 0) throw new TypeError("anytok: vocabSize must be a non-negative integer");
    if (style !== "hf" && style !== "tiktoken") throw new TypeError('anytok: style must be "hf" or "tiktoken"');
    if (typeof pattern !== "string" || !pattern) throw new TypeError("anytok: pattern must be a bundled encoding's name or a regex");
    if (!Array.isArray(specialTokens) || !specialTokens.every((t) => typeof t === "string")) {
      throw new TypeError("anytok: specialTokens must be an array of strings");
    }
    const known = new Set(["baseURL", "manifestURL", "workerURL", "pyodideURL", "stdlibURL", "wheelURL", "glueURL", "snapshot"]);
    const unknown = Object.keys(urlOptions).filter((k) => !known.has(k));
    if (unknown.length) throw new TypeError(`anytok: unknown training option(s): ${unknown.join(", ")}`);
    signal?.throwIfAborted();

    const { manifest, manifestURL } = await manifestFor(urlOptions);
    const names = Object.keys(manifest.encodings).sort();
    const urls = resolveURLs(urlOptions, manifest, manifestURL);
    // A bundled encoding's name stands for its split pattern; the slim wheel has no
    // vocabularies, so the pattern is read from the encoding loaded in the page's worker.
    let regex = pattern;
    if (manifest.encodings[pattern]) regex = (await AnyTok.load({ ...urlOptions, encoding: pattern })).pattern;
    signal?.throwIfAborted();

    const args = { texts, options: { vocabSize, style, pattern: regex, specialTokens, minFrequency, maxTokenLength, name } };
    const result = await trainInWorker(urls, signal, "train", args, onProgress);

    // The trained tokenizer goes to the page's worker, with the others: the training worker
    // may be terminated by a later cancel.
    const runtime = runtimeFor(urls);
    runtime.info ??= await runtime.ready;
    const key = `trained ${++customCount}`;
    const request = { key, name: null, url: null, sha256: null, bytes: result.atok.slice(), fileName: `${name}.atok` };
    const info = await runtime.call("load", request);
    const files = { atok: result.atok };
    if (result.tokenizerJson !== undefined) files.tokenizerJson = result.tokenizerJson;
    if (result.tiktoken !== undefined) files.tiktoken = result.tiktoken;
    const training = Object.freeze({
      kind: "bpe", style: result.style, nVocab: result.nVocab, nMerges: result.nMerges, pattern: result.pattern,
      specialTokens: result.specialTokens, trainSeconds: result.trainSeconds, merges: result.merges,
      files: Object.freeze(files),
    });
    return new AnyTok(runtime, key, { ...info, training }, names, info.methods ?? runtime.info.methods);
  }

  #call(op, args, transfer) {
    return this.#runtime.call(op, { key: this.#key, ...args }, transfer);
  }

  /** Names of the bundled encodings. */
  encodings() {
    return [...this.#names];
  }

  /**
   * Token ids of `text`; options as tiktoken's `allowed_special` / `disallowed_special`.  With
   * `{ offsets: true }`: `{ ids, offsets }`, where `offsets[i]` is token i's `[start, end)` in
   * `text` (UTF-16 indexes, as `text.slice` takes them): the tokenizer's own offsets (those of
   * Hugging Face `tokenizers` for a tokenizer.json), mapped from code points to UTF-16.
   */
  async encode(text, options) {
    checkText(text);
    const opts = specialOptions(options);
    if (options?.offsets !== undefined && typeof options.offsets !== "boolean") {
      throw new TypeError("anytok: offsets must be true or false");
    }
    if (options?.offsets) return idsAndOffsets(await this.#call("encodeOffsets", { text, options: opts }));
    const shared = await this.#shared(text, opts, true);
    if (shared !== null) return shared;
    return arrayOf(await this.#call("encode", { text, options: opts }));
  }

  /** The number of tokens `encode` would give, without sending the ids back. */
  async count(text, options) {
    checkText(text);
    const opts = specialOptions(options);
    const shared = await this.#shared(text, opts, false);
    if (shared !== null) return shared;
    return this.#call("count", { text, options: opts });
  }

  // A long text's ids (or count) from all the workers, or null where one worker must do it.
  async #shared(text, opts, withIds) {
    if (!this.#helpers.length || text.length < PARALLEL_MIN) return null;
    const allowed = opts.allowedSpecial;
    if (allowed === "all" || (Array.isArray(allowed) && allowed.length)) return null;
    const disallowed = opts.disallowedSpecial;
    const checkSpecial = !(Array.isArray(disallowed) && disallowed.length === 0);
    const workers = [[this.#runtime, this.#key], ...this.#helpers];
    const cuts = cutPoints(text, workers.length);
    const windows = await Promise.all(cuts.slice(0, -1).map((a, i) => {
      const b = cuts[i + 1];
      const [runtime, key] = workers[i];
      return runtime.call("window", {
        key, block: text.slice(a, b), overlap: text.slice(b, b + OVERLAP), final: b === text.length, withIds, checkSpecial,
      });
    }));
    if (windows.some((w) => w === null)) return null;
    const joined = withIds ? joinIds(windows) : joinCounts(windows);
    if (joined !== null) this.#sharedCalls++;
    return joined;
  }

  /** Tests and benchmarks only, not part of the API: how many calls several workers shared. */
  _sharedCalls() {
    return this.#sharedCalls;
  }

  /**
   * The ids of an OpenAI chat as gpt-tokenizer's encodeChat gives them (anytok.chat.encode), or of
   * a harmony conversation (openai-harmony's JSON form) on o200k_harmony.  `options.model`
   * defaults to gpt-4o on o200k_base, gpt-4 on cl100k_base, gpt-oss-120b on o200k_harmony.
   */
  async encodeChat(messages, options = {}) {
    return this.#call("chat", { op: "encode", payload: { ...options, messages } });
  }

  /**
   * The tokens of a chat: a messages array (as `encodeChat(...).length`), or a whole Chat
   * Completions (or Responses API) request with functions / tools, tool calls, content parts
   * and images (anytok.chat.count_request).  With `options.perMessage`, what each message adds,
   * then the reply priming (messages only); with `options.report` (a request), chat.request_report's
   * { tokens, parts, not_counted } (`imageSizes`: {url: [width, height]}; `autoDetail`).
   */
  async countChat(input, options = {}) {
    const { perMessage = false, report = false, ...rest } = options;
    if (Array.isArray(input)) {
      return this.#call("chat", { op: perMessage ? "messageCounts" : "count", payload: { ...rest, messages: input } });
    }
    if (input && typeof input === "object" && (Array.isArray(input.messages) || "input" in input)) {
      if (perMessage) throw new TypeError("anytok: countChat's perMessage takes a messages array");
      return this.#call("chat", { op: report ? "requestReport" : "countRequest", payload: { ...rest, request: input } });
    }
    throw new TypeError("anytok: countChat takes a messages array or a request with 'messages' or 'input'");
  }

  /**
   * A chat's ids (text with `tokenize: false`) as transformers' `apply_chat_template` with the
   * tokenizer_config.json's template; other option keys are template variables.  `perMessage`:
   * what each message adds, then the generation prompt's.  The first call fetches jinja2.
   */
  async applyChatTemplate(messages, options = {}) {
    if (!Array.isArray(messages)) throw new TypeError("anytok: applyChatTemplate takes a messages array");
    if (options === null || typeof options !== "object") throw new TypeError("anytok: applyChatTemplate's options must be an object");
    const { tools, documents, addGenerationPrompt, continueFinalMessage, tokenize = true, chatTemplate,
            perMessage = false, ...kwargs } = options;
    const payload = { messages, tools, documents, addGenerationPrompt, continueFinalMessage, tokenize, chatTemplate, kwargs };
    if (perMessage) {
      if (tokenize === false) throw new TypeError("anytok: applyChatTemplate's perMessage counts tokens (not with tokenize: false)");
      return this.#call("chatTemplate", { op: "messageCounts", payload });
    }
    return this.#call("chatTemplate", { op: "apply", payload });
  }

  /** `count` of each text, in one request. */
  async countBatch(texts, options) {
    if (!Array.isArray(texts)) throw new TypeError("anytok: texts must be an array of strings");
    texts.forEach((text, i) => checkText(text, `texts[${i}]`));
    const opts = specialOptions(options);
    const chars = texts.reduce((n, t) => n + t.length, 0);
    if (this.#helpers.length && texts.length > 1 && chars >= PARALLEL_MIN) {
      // Texts are counted apart anyway: consecutive groups of about equal length, one a worker.
      const workers = [[this.#runtime, this.#key], ...this.#helpers];
      const groups = [];
      let group = [];
      let size = 0;
      for (const text of texts) {
        group.push(text);
        size += text.length;
        if (size >= (chars * (groups.length + 1)) / workers.length && groups.length < workers.length - 1) {
          groups.push(group);
          group = [];
        }
      }
      groups.push(group);
      const parts = await Promise.all(groups.map((g, i) => {
        const [runtime, key] = workers[i];
        return g.length ? runtime.call("countBatch", { key, texts: g, options: opts }) : [];
      }));
      this.#sharedCalls++;
      return parts.flatMap((p) => arrayOf(p));
    }
    return arrayOf(await this.#call("countBatch", { texts, options: opts }));
  }

  /**
   * The tokens of `text` as pieces of it: `[{ text, ids, start, end, byteLengths, exact }, ...]`,
   * one piece per token except where tokens share characters (a character split between
   * tokens); text no token covers (a normalizer removed it) is a piece of no ids.  `start`/`end`
   * index `text` (UTF-16); the pieces follow each other and cover all of it.  They come from
   * `encode(text, { offsets: true })`, exact for every format (`exact` is always true).
   * `byteLengths`: each id's own bytes (-1 where unknown).
   */
  async tokenize(text, options) {
    checkText(text);
    const pairs = await this.#call("tokenize", { text, options: specialOptions(options) });
    return piecesOf(text, pairs);
  }

  /** The text of a list of token ids (invalid UTF-8 becomes U+FFFD unless errors: "strict"). */
  async decode(ids, options = {}) {
    const array = tokenIds(ids);
    const errors = options.errors ?? "replace";
    // A tiktoken-style encoding decodes here, from its tokens' bytes; other tokenizers (their
    // decoders do more than join bytes) and other error modes in the worker, by Python.
    if (errors === "replace" && this.kind === "encoding" && !this.#runtime.dead) {
      const table = await this.#decodeTable();
      if (table) return table.decode(array);
    }
    return this.#call("decode", { ids: array, errors }, [array.buffer]);
  }

  /**
   * Each token's own bytes (a Uint8Array), as `constrain` matches them: a byte token
   * (`<0xE5>`) is that byte, a byte-level token the bytes its characters stand for, a
   * SentencePiece piece its text with a space for U+2581; for a special token (end of
   * sequence, control tokens), which has no text of its own, its name (a string).
   */
  async tokenBytes(ids) {
    const array = tokenIds(ids);
    return this.#call("tokenBytes", { ids: array }, [array.buffer]);
  }

  // The ByteTable of this tokenizer, asked of the worker once and shared by every AnyTok of the
  // same tokenizer in that worker; null where the worker has none to give.
  #decodeTable() {
    const tables = this.#runtime.decodeTables;
    let table = tables.get(this.#key);
    if (!table) {
      table = this.#call("decodeTable", {}).then((parts) => (parts ? new ByteTable(parts) : null));
      tables.set(this.#key, table);
      table.catch(() => {
        if (tables.get(this.#key) === table) tables.delete(this.#key);
      });
    }
    return table;
  }

  /**
   * A token-mask matcher (anytok.constrain, llguidance's semantics) for this tokenizer:
   * `await tok.constrain({ regex: "[0-9]{1,3}" })`, `({ jsonSchema: {...} or JSON text })` or
   * `({ grammar: larkText })` or `({ gbnf: llamaCppGbnfText })`; `eosToken` overrides the end-of-sequence token.  Its state lives in
   * the worker; `free()` it when done.
   */
  async constrain(spec, { eosToken } = {}) {
    const kinds = ["regex", "jsonSchema", "grammar", "gbnf"].filter((k) => spec?.[k] !== undefined);
    if (kinds.length !== 1) throw new TypeError("anytok: constrain takes exactly one of { regex, jsonSchema, grammar, gbnf }");
    const kind = kinds[0];
    let text = spec[kind];
    if (kind === "jsonSchema" && typeof text !== "string") text = JSON.stringify(text);
    if (typeof text !== "string") throw new TypeError(`anytok: constrain's ${kind} must be a string`);
    if (eosToken !== undefined && !Number.isInteger(eosToken)) throw new TypeError("anytok: eosToken must be a token id");
    const { id, trie } = await this.#call("constrainNew", { kind, spec: text, eos: eosToken ?? null });
    return new Matcher((op, arg) => this.#runtime.call("constrainCall", { matcher: id, op, arg }), trie);
  }

  /** Benchmarks only, not part of the API: empties the worker's cache of merged pieces (so
   *  that a timed call is not helped by an earlier one) and resolves to how many it held. */
  async _clearPieceCache() {
    const held = await Promise.all([[this.#runtime, this.#key], ...this.#helpers].map(
      ([runtime, key]) => runtime.call("clearPieceCache", { key })));
    return held.reduce((a, b) => a + b, 0);
  }

  /**
   * This tokenizer as an anytok `.atok` file (what `anytok.files.tokenizer_to_bytes` writes):
   * a tokenizer.json or .model converted once, to load faster next time.
   */
  async toAtok() {
    return this.#call("toAtok", {});
  }
}

/** A generation under a constraint (made by `tok.constrain`); every method is one worker call. */
export class Matcher {
  #call;
  #trie;

  constructor(call, trie = "built") {
    this.#call = call;
    this.#trie = trie;
  }

  /** Where the tokenizer's token trie (what masks walk) came from: "file" (kept by an earlier
   *  page or process: in Cache Storage, or under Node in its cache folder) or "built" (by this
   *  worker; a vocabulary under 20,000 tokens is always built: it takes milliseconds). */
  get trie() {
    return this.#trie;
  }

  /** The allowed tokens as a bitmask: bit (id % 32) of word (id >> 5), llguidance's layout. */
  mask() {
    return this.#call("mask");
  }

  /** The allowed token ids, ascending. */
  async allowed() {
    return arrayOf(await this.#call("allowed"));
  }

  /** Consume a token: false (and no change) if it is not allowed. */
  consume(tokenId) {
    if (!Number.isInteger(tokenId) || tokenId < 0) return Promise.reject(new TypeError(`anytok: ${tokenId} is not a token id`));
    return this.#call("consume", tokenId);
  }

  /** Whether the output so far is complete (end-of-sequence allowed). */
  isAccepting() {
    return this.#call("accepting");
  }

  /** Whether the last consume left nothing but end-of-sequence possible. */
  isStopped() {
    return this.#call("stopped");
  }

  /** Tokens forced from here (the only continuation). */
  async forced() {
    return arrayOf(await this.#call("forced"));
  }

  /** Undo the last n consumed tokens; resolves to how many remain. */
  rollback(n) {
    if (!Number.isInteger(n) || n < 0) return Promise.reject(new TypeError("anytok: rollback takes a count >= 0"));
    return this.#call("rollback", n);
  }

  /** Undo every consumed token. */
  async reset() {
    await this.#call("reset");
  }

  /** Drop the matcher's state in the worker; the matcher cannot be used afterwards. */
  async free() {
    await this.#call("free");
  }
}

let customCount = 0;

// A tokenizer file given as a File or Blob.  A GGUF model file is read only as far as its
// header's key-values go (the tokenizer), never its tensors: a first slice of 1 MiB, then
// slices doubling what was read until the key-values end (`ggufExtent` walks them); the
// worker gets those bytes and the file's size.  Any other file is read whole.
async function fileVocab(options) {
  const blob = options.file;
  if (!(blob instanceof Blob)) throw new TypeError("anytok: file must be a File or a Blob");
  const fileName = options.fileName !== undefined ? String(options.fileName) : blob.name ?? null;
  const size = blob.size;
  const read = async (start, end) => new Uint8Array(await blob.slice(start, end).arrayBuffer());
  let bytes = await read(0, Math.min(size, GGUF_FIRST_READ));
  const request = { key: `file ${++customCount}`, name: options.encoding ?? null, url: null, sha256: null, fileName };
  if (bytes.length < 4 || String.fromCharCode(...bytes.subarray(0, 4)) !== "GGUF") {
    if (bytes.length < size) bytes = concat(bytes, await read(bytes.length, size));
    return { ...request, bytes };
  }
  for (;;) {
    const extent = ggufExtent(bytes, size);
    if (extent.end !== undefined) {
      bytes = bytes.subarray(0, extent.end);
      break;
    }
    if (extent.need === undefined) break; // damaged: the worker says what is wrong where
    const more = Math.min(size, Math.max(extent.need, 2 * bytes.length));
    bytes = concat(bytes, await read(bytes.length, more));
  }
  return { ...request, bytes, fileSize: size };
}

const GGUF_FIRST_READ = 1 << 20;
// Bytes of each fixed-size GGUF value type (by type number); 8 is a string, 9 an array.
const GGUF_WIDTH = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8];

/**
 * How far the key-values of a GGUF file go, from its first bytes `buf` (of `size` in all):
 * { end } (the offset after the last key-value), { need } (read up to there at least, then
 * ask again) or {} when the header cannot be right (a length past the end of the file, an
 * unknown type): the Python reader then names the fault, checking the same bounds.
 */
function ggufExtent(buf, size) {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const have = buf.length;
  const BAD = {};
  let pos = 0;
  const need = (n) => {
    if (pos + n > size) throw BAD;
    if (pos + n > have) throw { need: pos + n };
  };
  try {
    need(24);
    let le = true;
    const version = view.getUint32(4, true);
    if (version !== 2 && version !== 3) {
      const be = view.getUint32(4, false);
      if (be !== 2 && be !== 3) throw BAD;
      le = false;
    }
    const u64 = (at) => {
      // (two 32-bit halves: no BigInt made for each of the ~10^5 strings walked)
      const lo = view.getUint32(at + (le ? 0 : 4), le);
      const hi = view.getUint32(at + (le ? 4 : 0), le);
      const n = hi * 4294967296 + lo;
      return hi >= 0x200000 || n > size ? Infinity : n;
    };
    const kvCount = u64(16);
    pos = 24;
    if (kvCount * 14 > size - pos) throw BAD;
    const skip = (type, depth) => {
      const width = GGUF_WIDTH[type];
      if (width === undefined) throw BAD;
      if (width) {
        need(width);
        pos += width;
      } else if (type === 8) {
        need(8);
        const n = u64(pos);
        pos += 8;
        need(n);
        pos += n;
      } else {
        if (depth >= 4) throw BAD;
        need(12);
        const elementType = view.getUint32(pos, le);
        const n = u64(pos + 4);
        pos += 12;
        const w = GGUF_WIDTH[elementType];
        if (w === undefined) throw BAD;
        if (w) {
          need(n * w);
          pos += n * w;
        } else {
          if (n * (elementType === 8 ? 8 : 12) > size - pos) throw BAD;
          for (let i = 0; i < n; i++) skip(elementType, depth + 1);
        }
      }
    };
    for (let i = 0; i < kvCount; i++) {
      skip(8, 0); // the key
      need(4);
      const type = view.getUint32(pos, le);
      pos += 4;
      skip(type, 0);
    }
    return { end: pos };
  } catch (err) {
    if (err === BAD) return {};
    if (err && err.need !== undefined) return { need: err.need };
    throw err;
  }
}

function concat(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

// load's `config`: a tokenizer_config.json as its text, its bytes or its parsed object -> JSON text.
function configText(config) {
  if (typeof config === "string") return config;
  if (config instanceof ArrayBuffer || ArrayBuffer.isView(config)) {
    const bytes = config instanceof ArrayBuffer ? new Uint8Array(config) : new Uint8Array(config.buffer, config.byteOffset, config.byteLength);
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  }
  if (config && typeof config === "object") return JSON.stringify(config);
  throw new TypeError("anytok: config must be a tokenizer_config.json: its text, bytes or parsed object");
}

async function customVocab(options, manifestURL) {
  if (typeof options.data === "string") {
    // The text of a file (a tokenizer.json): its UTF-8 bytes.
    options = { ...options, data: new TextEncoder().encode(options.data) };
  }
  const vocab = options.vocab ?? options.url ?? options.data;
  if (options.url !== undefined && !(typeof vocab === "string" || vocab instanceof URL)) {
    throw new TypeError("anytok: url must be a string or a URL");
  }
  if (options.data !== undefined && !(vocab instanceof ArrayBuffer || ArrayBuffer.isView(vocab))) {
    throw new TypeError("anytok: data must be an ArrayBuffer, a typed array or a string (a tokenizer.json's text)");
  }
  if (typeof vocab === "string" || vocab instanceof URL) {
    const url = new URL(vocab, manifestURL).href;
    return { key: `custom ${url}`, name: options.encoding ?? null, url, sha256: null };
  }
  if (vocab instanceof ArrayBuffer || ArrayBuffer.isView(vocab)) {
    const bytes = vocab instanceof ArrayBuffer ? new Uint8Array(vocab) : new Uint8Array(vocab.buffer, vocab.byteOffset, vocab.byteLength);
    const fileName = options.fileName === undefined ? null : String(options.fileName);
    return { key: `bytes ${++customCount}`, name: options.encoding ?? null, url: null, sha256: null, bytes: bytes.slice(), fileName };
  }
  throw new TypeError("anytok: vocab / url / data must be a URL or the bytes of a tokenizer file");
}

export default AnyTok;
