// anytok's Web Worker: Pyodide and anytok, off the page's main thread.
//
// Started by anytok.js as a module worker.  Protocol, one answer per request:
//   page -> worker   { id, op, args }
//   worker -> page   { id, ok: true, result }  or  { id, ok: false, error }
// Requests run one at a time, in the order they arrived: Python is single-threaded, and the
// queue keeps a vocabulary load or a long encode from interleaving with anything else.  One
// worker holds any number of tokenizers, each under the key the page gave it.
//
// While it starts, the worker also sends { download: { url, loaded, total, done } } messages
// (no id): the bytes of each file fetched so far, for a page's progress bar (total: null when the
// response is compressed or its length is not given).
//
// A `train` request also sends { id, progress } messages while it runs (counting: MB and MB/s;
// merging: done of total and an ETA); so does `trainKind` (reading: characters of total; then
// the training's steps).  It cannot be cancelled from in here: Python holds this
// thread until it returns, so no message is read meanwhile (Pyodide's interrupt buffer would
// need a SharedArrayBuffer, hence a cross-origin-isolated page).  anytok.js therefore trains in
// a worker of its own and cancels by terminating that worker.

const VOCAB_CACHE = "anytok-vocab-v1";
// This worker's URL (Bun's workers have no self.location).  Cache Storage is used only when it is
// served over HTTP(S): Deno's Cache Storage takes no file: URLs (and a package read from disk
// needs no copy of its files).
const HERE = self.location?.href ?? import.meta.url;
const CACHEABLE = /^https?:/.test(HERE);

// Every fetch of the worker (and of Pyodide in it) reports its bytes as they arrive.
if (typeof self.postMessage === "function" && typeof TransformStream === "function" && typeof self.fetch === "function") {
  const rawFetch = self.fetch.bind(self);
  const REPORT_MS = 100;
  self.fetch = async (input, init) => {
    const response = await rawFetch(input, init);
    if (!response.ok || !response.body || response.status !== 200) return response;
    const url = response.url || String(input?.url ?? input);
    const length = Number(response.headers.get("content-length"));
    const total = response.headers.get("content-encoding") || !length ? null : length;
    let loaded = 0;
    let last = 0;
    const report = (done) => self.postMessage({ download: { url, loaded, total, done } });
    const counted = response.body.pipeThrough(new TransformStream({
      transform(chunk, controller) {
        loaded += chunk.byteLength;
        const now = performance.now();
        if (now - last > REPORT_MS) {
          last = now;
          report(false);
        }
        controller.enqueue(chunk);
      },
      flush() {
        report(true);
      },
    }));
    const copy = new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
    // (the copy keeps the original's URL, which Pyodide and callers may read)
    Object.defineProperty(copy, "url", { value: response.url });
    return copy;
  };
}

let runtime = null; // Promise of { py, glue }, set by "init"
let queue = Promise.resolve();
// Work that no answer waits for (after a restore, unpacking anytok's files; keeping a copy of
// a downloaded vocabulary), run once the worker has had no request for IDLE_MS, in the queue.
let filesPending = null;
const idleTasks = [];
let idle = null;
const IDLE_MS = 500;

function whenIdle(task) {
  idleTasks.push(task);
  scheduleIdle();
}

function scheduleIdle() {
  clearTimeout(idle);
  idle = setTimeout(() => {
    queue = queue.then(async () => {
      while (idleTasks.length) {
        try {
          await idleTasks.shift()();
        } catch (err) {
          console.warn("anytok:", err); // (each task reports its own failures; never stop the queue)
        }
      }
    });
  }, IDLE_MS);
}

self.onmessage = (event) => {
  const { id, op, args } = event.data;
  clearTimeout(idle);
  if (op === "load") readEarly(args);
  queue = queue.then(async () => {
    try {
      const handler = OPS[op];
      if (!handler) throw new Error(`anytok worker: unknown request ${JSON.stringify(op)}`);
      const [result, transfer] = await handler(args, id);
      self.postMessage({ id, ok: true, result }, transfer ?? []);
    } catch (err) {
      self.postMessage({ id, ok: false, error: describe(err) });
    }
    if (filesPending) {
      const unpack = filesPending;
      filesPending = null;
      idleTasks.push(() => {
        try {
          unpack();
        } catch (err) {
          console.warn("anytok: could not unpack anytok's files:", err);
        }
      });
    }
    if (idleTasks.length) scheduleIdle();
  });
};

// --- errors ---------------------------------------------------------------------------------

// A Python exception arrives as a PythonError whose message is the whole traceback.  The page
// wants what Python would print last: the exception's own message, without the frames.
function pythonMessage(traceback) {
  const lines = traceback.replace(/\s+$/, "").split("\n");
  let last = -1;
  lines.forEach((line, i) => {
    if (line.startsWith("  File ")) last = i;
  });
  let start = last + 1;
  while (start < lines.length && /^\s/.test(lines[start])) start++; // the frame's source lines
  const text = lines.slice(start).join("\n");
  return text.replace(/^[\w.]+: /, "") || traceback;
}

function describe(err) {
  if (err && typeof err.type === "string" && err.constructor?.name === "PythonError") {
    return { name: "PythonError", pythonType: err.type, message: pythonMessage(err.message), traceback: err.message };
  }
  return { name: err?.name ?? "Error", pythonType: null, message: String(err?.message ?? err), traceback: null };
}

// --- start-up -------------------------------------------------------------------------------

async function fetchOk(url, what) {
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new Error(`could not fetch ${what} from ${url}: ${err.message}`);
  }
  if (!response.ok) throw new Error(`could not fetch ${what} from ${url}: HTTP ${response.status}`);
  return response;
}

// stdlibURL: the standard library compiled to .pyc (build_web.py), given to Pyodide through its
// public `stdLibURL` option; null for the stock one.  It is fetched here and handed over as a blob
// URL, so that a failed fetch is an error that names it (Pyodide itself would only log it and then
// fail to start Python).
//
// snapshot (default on): the first start makes a memory snapshot of the interpreter right after
// anytok and the glue are imported (Pyodide's private `_makeSnapshot` / `makeMemorySnapshot` /
// `_loadSnapshot`, tied to one Pyodide build) and keeps it in Cache Storage, without its
// all-zero pages (packSnapshot: ~16 of ~31 MB are kept); later starts restore
// it instead of starting Python and importing.  The key is the sha256 of everything the snapshot
// depends on (Pyodide's folder, the stdlib, wheel and glue: their content-named URLs, or their
// bytes when a URL does not name its content), so a changed file is a new snapshot; Pyodide's
// version is stored with it and compared, so is a checksum of the snapshot (checked before it
// is used), and Pyodide checks its build id.  Reading and checking it overlap Pyodide's loader
// and wasm download.  Any failure to restore falls back to a normal start (and drops the entry).
// Python's files are not in a snapshot (the file system lives outside the wasm memory): the
// stdlib is given again, and the wheel unpacked again when Python first looks for a module the
// snapshot does not hold or once the worker is idle (worker_glue.files_on_demand), not before
// the first count.  Every restore has the same hash seed (that of the start that made it);
// `random` is reseeded.  The snapshot is stored in the background, after the start, so the
// first count does not wait for it.
const SNAPSHOT_CACHE = "anytok-start-v2"; // v1 held whole heaps (deleted when met)
// Pyodide 314.0.7 restores into its initial 30 MiB heap only (pyodide#6254): a snapshot of a heap
// that grew is not kept.  Under Node, node_worker.mjs grows the wasm's memory to the snapshot's
// size before the restore and sets a larger bound (anytokSnapshotMaxBytes).
const SNAPSHOT_MAX_BYTES = self.anytokSnapshotMaxBytes ?? 30 * 2 ** 20 + 65536;

// Under Node (a disk cache, so a process that starts once per run), the snapshot is made after
// the first vocabulary's load, and its key names that vocabulary: a restored worker holds the
// tokenizer and answers its "load" from memory (preloaded).  anytok.js names the vocabulary in
// "init" (`vocab`: a bundled encoding's key, name, URL, sha256 and derive).  In a page, whose
// worker lives as long as the tab, the snapshot stays one per runtime, without a vocabulary.
let preloaded = null; // { key, sha256, loadMs, source } of the tokenizer the start loaded

async function digestHex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256Hex(...parts) {
  const chunks = parts.map((p) => (typeof p === "string" ? new TextEncoder().encode(p) : new Uint8Array(p)));
  const all = new Uint8Array(chunks.reduce((n, c) => n + 8 + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    new DataView(all.buffer).setBigUint64(at, BigInt(c.length), true);
    all.set(c, at + 8);
    at += 8 + c.length;
  }
  return digestHex(all);
}

async function openSnapshotCache() {
  try {
    // (Under Node, node_worker.mjs keeps the snapshot in a folder on disk: anytokDiskCache.)
    return self.caches && (CACHEABLE || self.anytokDiskCache) ? await caches.open(SNAPSHOT_CACHE) : null;
  } catch {
    return null;
  }
}

// A cheap check of a stored snapshot against accidental damage (a flipped bit, a truncated
// entry): its length and Fletcher's two running sums of its 32-bit words, ~10-20 ms for 30 MB
// where SHA-256 took ~200 ms on the way to the first count.  (Whoever can write the origin's
// Cache Storage can run code in its pages anyway; this is not a defence against them.)
function checksum(bytes) {
  if (bytes.byteOffset % 4) bytes = bytes.slice();
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
  let a = 0;
  let b = 0;
  for (let i = 0; i < words.length; i++) {
    a = (a + words[i]) | 0;
    b = (b + a) | 0;
  }
  for (let i = words.length * 4; i < bytes.length; i++) {
    a = (a + bytes[i]) | 0;
    b = (b + a) | 0;
  }
  return `${bytes.length}:${(a >>> 0).toString(16)}:${(b >>> 0).toString(16)}`;
}

// A snapshot is stored without its all-zero 4 KiB pages: about half of a fresh heap is free
// memory, zero, and the restore waits for the entry to be read from Cache Storage (sharing the
// CPU with the wasm's compile and the loader).  Stored form: a little-endian Uint32 header
// [heap size, number of runs, then each run's start and length in bytes], then the runs' bytes.
const PAGE = 4096;

function packSnapshot(heap) {
  if (heap.byteOffset % 4) heap = heap.slice();
  const words = new Uint32Array(heap.buffer, heap.byteOffset, heap.byteLength >>> 2);
  const zeroPage = (start) => {
    const end = Math.min(start + PAGE, heap.length);
    for (let i = start >>> 2; i < end >>> 2; i++) if (words[i]) return false;
    for (let i = end & ~3; i < end; i++) if (heap[i]) return false;
    return true;
  };
  const runs = []; // [start, end) byte ranges of the pages that are not all zero
  for (let start = 0; start < heap.length; start += PAGE) {
    if (zeroPage(start)) continue;
    const end = Math.min(start + PAGE, heap.length);
    const last = runs[runs.length - 1];
    if (last && last[1] === start) last[1] = end;
    else runs.push([start, end]);
  }
  const head = new Uint32Array(2 + 2 * runs.length);
  head[0] = heap.length;
  head[1] = runs.length;
  let size = head.byteLength;
  runs.forEach(([start, end], i) => {
    head[2 + 2 * i] = start;
    head[3 + 2 * i] = end - start;
    size += end - start;
  });
  const out = new Uint8Array(size);
  out.set(new Uint8Array(head.buffer));
  let at = head.byteLength;
  for (const [start, end] of runs) {
    out.set(heap.subarray(start, end), at);
    at += end - start;
  }
  return out;
}

const malformed = (why) => { throw new Error(`the stored snapshot is malformed (${why})`); };

// An empty heap of the stored snapshot's size.
function heapFor(stored) {
  if (stored.length < 8) malformed("no header");
  const size = new DataView(stored.buffer, stored.byteOffset, 4).getUint32(0, true);
  if (size > SNAPSHOT_MAX_BYTES) malformed(`a heap of ${size} bytes`);
  return new Uint8Array(size);
}

function unpackSnapshot(stored, heap = heapFor(stored)) {
  const fail = malformed;
  const view = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
  if (heap.length !== view.getUint32(0, true)) fail("its size changed");
  const n = view.getUint32(4, true);
  let at = 8 + 8 * n;
  if (at > stored.length) fail("header past its end");
  for (let i = 0; i < n; i++) {
    const start = view.getUint32(8 + 8 * i, true);
    const length = view.getUint32(12 + 8 * i, true);
    if (start + length > heap.length || at + length > stored.length) fail("a run past its end");
    heap.set(stored.subarray(at, at + length), start);
    at += length;
  }
  if (at !== stored.length) fail("bytes after its runs");
  return heap;
}

// The check of a stored snapshot: checksum() in a page; under Node, node_worker.mjs's native
// CRC-32 (anytokChecksum, ~20 ms where checksum() takes ~100 for a snapshot that holds a
// vocabulary).
const snapshotChecksum = self.anytokChecksum ?? checksum;

// A stored snapshot's heap, read, checked against the checksum stored with it, and unpacked:
// { heap, fill }.  In a page, `heap` is unpacked before it is given (fill: null).  Under Node,
// where the snapshot holds a vocabulary (~36 MB stored), `heap` is empty, of its size, so that
// Pyodide may start compiling its wasm at once (it waits for the heap first), and `fill` checks
// and unpacks it (throwing if it is damaged): node_worker.mjs calls it while the wasm compiles,
// before the restore copies the heap.
async function readSnapshot(hit, ms, t0) {
  const bytes = new Uint8Array(await hit.arrayBuffer());
  ms.snapshotRead = Math.round(performance.now() - t0);
  const heap = heapFor(bytes);
  let outcome = null; // once filled: true, or the error (thrown again at every call)
  const fill = () => {
    if (outcome === null) {
      const t1 = performance.now();
      try {
        const sum = snapshotChecksum(bytes);
        if (sum !== hit.headers.get("X-Anytok-Checksum")) throw new Error(`its checksum ${sum} does not match`);
        unpackSnapshot(bytes, heap);
        outcome = true;
      } catch (err) {
        outcome = err;
      }
      ms.snapshotCheck = Math.round(performance.now() - t1);
    }
    if (outcome !== true) throw outcome;
  };
  if (self.anytokDiskCache) return { heap, fill };
  fill();
  return { heap, fill: null };
}

// The wheel unpacked and the glue written (again, after a restore), so that modules imported
// later are found.
function install(py, { wheel, glueSource, gluePyc }) {
  // unpackArchive rather than loadPackage: a bad URL or a broken wheel then fails here, loudly,
  // instead of being logged and ignored.
  py.unpackArchive(new Uint8Array(wheel), "wheel");
  const site = py.runPython("import sysconfig; sysconfig.get_path('purelib')");
  py.FS.writeFile(`${site}/anytok_web_glue.py`, glueSource);
  // A checked .pyc: Python uses it only if it was compiled from exactly this source.
  if (gluePyc) {
    py.FS.mkdirTree(`${site}/__pycache__`);
    py.FS.writeFile(py.runPython(`import importlib.util; importlib.util.cache_from_source(${JSON.stringify(`${site}/anytok_web_glue.py`)})`),
                    new Uint8Array(gluePyc));
  }
  py.runPython("import importlib; importlib.invalidate_caches()");
}

// A URL that names its content (build_web.py's `-<16 hex>.` file names and `?v=<16 hex>`): its
// bytes need not be hashed for the snapshot key, the URL stands for them.
function contentNamed(url) {
  const u = new URL(url, HERE);
  return /-[0-9a-f]{16}\.[A-Za-z]+$/.test(u.pathname) || /^[0-9a-f]{16,64}$/.test(u.searchParams.get("v") ?? "");
}

// Parts of the standard library and of anytok that the first download leaves out (build_web.py's
// lazyParts): Python asks for one (worker_glue._LazyParts) when it first imports a module of it,
// and the import waits for it, so it is fetched synchronously (allowed in a worker); the HTTP
// cache keeps it for later visits (its URL names its content).
// Outside a browser (Deno and Bun run this worker as it is; Node through node_worker.mjs), the
// package's files are read from disk: a file: URL as a path.
function filePath(url) {
  const path = decodeURIComponent(new URL(url).pathname);
  return /^\/[A-Za-z]:\//.test(path) ? path.slice(1) : path; // (Windows: /C:/... -> C:/...)
}

function readFileSyncOf() {
  if (globalThis.Deno?.readFileSync) return (path) => globalThis.Deno.readFileSync(path);
  const fs = globalThis.process?.getBuiltinModule?.("node:fs");
  return fs ? (path) => fs.readFileSync(path) : null;
}

self.anytokFetchPart = (url) => {
  const readSync = typeof XMLHttpRequest === "undefined" && String(url).startsWith("file:") ? readFileSyncOf() : null;
  if (readSync) {
    const bytes = readSync(filePath(url));
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const request = new XMLHttpRequest();
  request.open("GET", url, false);
  request.responseType = "arraybuffer";
  try {
    request.send();
  } catch (err) {
    throw new Error(`could not fetch ${url}: ${err.message}`);
  }
  if (request.status !== 200) throw new Error(`could not fetch ${url}: HTTP ${request.status}`);
  return new Uint8Array(request.response);
};

async function boot({ pyodideURL, stdlibURL, wheelURL, glueURL, gluePycURL, snapshot = true, lazyParts = [], pyodideLock = null, vocab = null }) {
  const start = performance.now();
  const stdlib = stdlibURL ? fetchOk(stdlibURL, "Python's standard library").then((r) => r.arrayBuffer()) : null;
  const files = Promise.all([
    fetchOk(wheelURL, "the anytok wheel").then((r) => r.arrayBuffer()),
    fetchOk(glueURL, "the worker's Python glue").then((r) => r.text()),
    gluePycURL ? fetchOk(gluePycURL, "the worker's compiled Python glue").then((r) => r.arrayBuffer()) : null,
  ]).then(([wheel, glueSource, gluePyc]) => ({ wheel, glueSource, gluePyc }));
  stdlib?.catch(() => {});
  files.catch(() => {});
  const cache = snapshot ? openSnapshotCache() : null;
  if (!self.anytokDiskCache || !vocab?.key || !vocab.name || !vocab.url || !vocab.sha256) vocab = null;
  const loader = import(new URL("pyodide.mjs", pyodideURL).href);
  loader.catch(() => {});

  const ms = {}; // parts of the start, for bench_browser.py
  let key = null;
  let found = null; // Promise of the cached snapshot's { hit, heap } or null
  const snapshots = await cache;
  if (snapshots) {
    // The key: what the snapshot depends on.  Content-named URLs stand for their bytes (no
    // waiting for the downloads, no hashing of 5 MB); other files are hashed.  Pyodide's
    // version is checked against the entry's header once its loader is imported, so the
    // snapshot is read while the loader loads.
    const named = [stdlibURL, wheelURL, glueURL, gluePycURL].every((u) => !u || contentNamed(u));
    const abs = (u) => new URL(u, HERE).href;
    const parts = named
      ? ["urls", stdlibURL ? abs(stdlibURL) : "stock", abs(wheelURL), abs(glueURL), gluePycURL ? abs(gluePycURL) : ""]
      : await (async () => {
          const f = await files;
          return ["bytes", stdlib ? await stdlib : "stock", f.wheel, f.glueSource, f.gluePyc ?? ""];
        })();
    if (vocab) parts.push("vocab", vocab.key, vocab.name, new URL(vocab.url).href, vocab.sha256, JSON.stringify(vocab.derive ?? null));
    key = new URL(`anytok-start-snapshot?sha256=${await sha256Hex(pyodideURL, ...parts)}`, pyodideURL).href;
    const t0 = performance.now();
    found = snapshots.match(key).then((hit) => {
      if (!hit) return null;
      const read = readSnapshot(hit, ms, t0);
      const heap = read.then((r) => r.heap);
      heap.catch(() => {}); // reported where it is awaited
      return { hit, heap, read };
    }).catch(() => null);
  }
  const { loadPyodide, version } = await loader;
  const loaderMs = performance.now() - start;

  const startPython = async (extra) => {
    // Under Node (node_worker.mjs), Pyodide reads its files by path.
    const nodePath = self.anytokNodePath ?? (String(pyodideURL).startsWith("file:") ? filePath : null);
    const options = { indexURL: nodePath ? nodePath(pyodideURL) : pyodideURL, stdout: () => {},
                      stderr: (line) => console.warn(line), ...extra };
    if (pyodideLock) options.lockFileContents = pyodideLock; // (no pyodide-lock.json to fetch)
    let blob = null;
    if (stdlib && nodePath) {
      await stdlib; // (read, to report a missing file by its name)
      options.stdLibURL = nodePath(stdlibURL);
    } else if (stdlib) {
      options.stdLibURL = blob = URL.createObjectURL(new Blob([await stdlib]));
    }
    try {
      return await loadPyodide(options);
    } finally {
      if (blob) URL.revokeObjectURL(blob);
    }
  };

  let py = null;
  let glue = null;
  let booted;
  let snapshotState = "off";
  let filesState = "unpacked";
  const cached = found ? await found : null;
  if (cached && cached.hit.headers.get("X-Anytok-Pyodide") !== version) {
    await snapshots.delete(key).catch(() => {}); // made by another Pyodide at this URL
  } else if (cached) {
    // Pyodide waits for the heap only before it instantiates the wasm: it is read, checked and
    // unpacked while Pyodide fetches the wasm and imports its module.  (Handing Pyodide a heap
    // of the right size at once and filling it before the restore, through the `fsInit` hook,
    // let the wasm's compile start earlier but gained nothing measurable: the wait is for the
    // asm module and the wasm's bytes.)
    try {
      // (node_worker.mjs grows the wasm's memory to this heap's size before the restore.)
      if (self.anytokDiskCache) self.anytokRestore = { heap: cached.heap, fill: async () => (await cached.read).fill?.() };
      py = await startPython({ _loadSnapshot: cached.heap });
      booted = performance.now();
      if (vocab && cached.hit.headers.get("X-Anytok-Vocab") === vocab.key) {
        preloaded = { key: vocab.key, sha256: vocab.sha256, loadMs: 0, source: "snapshot" };
      }
      const f = await files;
      py.runPython("import sys\nif 'random' in sys.modules: sys.modules['random'].seed()");
      glue = py.pyimport("anytok_web_glue");
      // anytok's files: unpacked when Python first looks for a module the snapshot does not
      // hold (the glue's files_on_demand), or once the worker is idle; not before the first
      // count.
      let installed = false;
      const restored = py;
      self.anytokInstallFiles = () => {
        if (installed) return;
        installed = true;
        install(restored, f);
      };
      glue.files_on_demand();
      filesPending = () => glue.install_files();
      filesState = "on demand";
      snapshotState = "restored";
    } catch (err) {
      // anytok's own files could not be fetched: no start can succeed, and the snapshot is
      // not to blame (it is kept).
      const filesError = await files.then(() => null, (e) => e);
      if (filesError) throw filesError;
      // (Under Node, a damaged snapshot is found while Pyodide starts: fill's error says why.)
      const why = await cached.read.then((r) => { r.fill?.(); return err; }, (e) => e).catch((e) => e);
      console.warn("anytok: the start-up snapshot could not be restored, starting normally:", why);
      py = glue = preloaded = self.anytokRestore = null;
      filesPending = null;
      filesState = "unpacked";
      await snapshots.delete(key).catch(() => {});
    }
  }
  if (!py) {
    py = await startPython(snapshots ? { _makeSnapshot: true } : {});
    booted = performance.now();
    install(py, await files);
    if (snapshots) {
      // Imported without a Python object reaching JS (a snapshot may hold no live reference).
      py.runPython("import anytok_web_glue; anytok_web_glue.prepare_snapshot()");
      let vocabLoaded = true;
      if (vocab) {
        try {
          await preload(py, vocab, lazyParts);
        } catch {
          vocabLoaded = false; // the "load" that follows reports why; no snapshot of this start
          snapshotState = "failed";
        }
      }
      if (vocabLoaded) {
        try {
          const data = py.makeMemorySnapshot();
          if (data.length <= SNAPSHOT_MAX_BYTES) {
            snapshotState = "made";
            const store = () => {
              const packed = packSnapshot(data);
              const headers = { "X-Anytok-Checksum": snapshotChecksum(packed), "X-Anytok-Pyodide": version };
              if (vocab) headers["X-Anytok-Vocab"] = vocab.key;
              caches.delete("anytok-start-v1").catch(() => {});
              return snapshots
                .put(key, new Response(packed, { headers }))
                .catch((err) => console.warn("anytok: start-up snapshot not stored:", err));
            };
            // In a page, packed and stored in the background: the first count does not wait for
            // it.  Under Node, before the start completes: a script may end (and its worker with
            // it) right after its first count.
            if (self.anytokDiskCache) await store();
            else setTimeout(store, 0);
          } else {
            snapshotState = "too big";
          }
        } catch (err) {
          console.warn("anytok: no start-up snapshot:", err);
          snapshotState = "failed";
        }
      }
    }
    glue = py.pyimport("anytok_web_glue");
  }
  glue.lazy_parts(JSON.stringify(lazyParts));
  self.anytokRestore = null;
  // Where the start went (bench_browser.py prints it): the loader's import, the downloads of the
  // wasm and the stdlib (overlapping the rest), the snapshot's read and check (overlapping
  // Pyodide's own start), Pyodide's whole boot, anytok's install and import.
  const fetched = (suffix) => {
    const entry = performance.getEntriesByType?.("resource").find((e) => e.name.split("?")[0].endsWith(suffix));
    return entry ? Math.round(entry.responseEnd - entry.startTime) : null;
  };
  const timings = {
    pyodideMs: Math.round(booted - start),
    anytokMs: Math.round(performance.now() - booted),
    snapshot: snapshotState,
    files: filesState,
    startMs: { loader: Math.round(loaderMs), wasmFetch: fetched("pyodide.asm.wasm"),
               stdlibFetch: stdlibURL ? fetched(new URL(stdlibURL, HERE).pathname) : fetched("python_stdlib.zip"),
               ...ms },
  };
  return { py, glue, timings };
}

// The first vocabulary loaded before the snapshot is made (see `preloaded`), through the Python
// file system and a call that returns nothing: no Python object may reach JavaScript before it.
async function preload(py, vocab, lazyParts) {
  const t0 = performance.now();
  const what = decodeURIComponent(new URL(vocab.url).pathname.split("/").pop());
  const data = new Uint8Array(await (await fetchOk(vocab.url, `vocabulary ${what}`)).arrayBuffer());
  const path = "/tmp/anytok-preload";
  py.FS.writeFile(path, data);
  const arg = (v) => JSON.stringify(v);
  const derive = vocab.derive ? arg(JSON.stringify(vocab.derive)) : "None";
  py.runPython(`import anytok_web_glue as _g\n_g.lazy_parts(${arg(JSON.stringify(lazyParts))})\n`
               + `_g.preload(${arg(vocab.key)}, ${arg(path)}, ${arg(what)}, ${arg(vocab.name)}, ${derive})\ndel _g`);
  preloaded = { key: vocab.key, sha256: vocab.sha256, loadMs: Math.round(performance.now() - t0), source: "network" };
}

function ready() {
  if (!runtime) throw new Error("anytok worker: not initialised");
  return runtime;
}

// --- vocabularies, kept in Cache Storage ----------------------------------------------------

// The cache key carries the file's sha256, so a new vocabulary under the same URL is a new
// entry.  A file goes into the cache only after Python accepted it: a corrupt download is
// never kept.
async function openCache() {
  try {
    return self.caches && CACHEABLE ? await caches.open(VOCAB_CACHE) : null;
  } catch {
    return null; // e.g. storage disabled: fall back to plain fetches
  }
}

function cacheKey(url, sha256) {
  const key = new URL(url);
  key.searchParams.set("anytok-sha256", sha256);
  return key.href;
}

async function readCached(cache, k) {
  const hit = await cache.match(k);
  return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
}

// A bundled vocabulary's bytes are read from Cache Storage as soon as its "load" request
// arrives, while the request still waits for the start (cache key -> Promise of the bytes or
// null); loadVocab takes them from here.
const earlyReads = new Map();

function readEarly({ url, sha256, bytes }) {
  if (bytes || !url || !sha256) return;
  const k = cacheKey(url, sha256);
  if (earlyReads.has(k)) return;
  earlyReads.set(k, openCache().then((cache) => (cache ? readCached(cache, k) : null)).catch(() => null));
}

// A file fetched and not yet in Cache Storage (it is put there once the worker is idle), for a
// load of the same file meanwhile: an encoding derived from it (o200k_harmony from
// o200k_base.atok) loaded with its base is fetched once.
const fetchedNotKept = new Map();

// derive: a bundled encoding made from another one's file (the manifest's "derive": the fields
// that differ, as o200k_harmony from o200k_base.atok); that file is fetched and cached as for
// its own encoding.
// (fileSize: a GGUF model file's size, of which `bytes` is the header that anytok.js read)
// (config: the text of a tokenizer_config.json, whose chat template the tokenizer then applies)
async function loadVocab({ key, name, url, sha256, bytes, fileName, derive, fileSize, config }) {
  const { glue } = await ready();
  const what = url ? decodeURIComponent(new URL(url).pathname.split("/").pop()) : (fileName || "vocab file");
  const start = performance.now();
  const fields = derive ? JSON.stringify(derive) : undefined;
  if (preloaded && key === preloaded.key && sha256 === preloaded.sha256 && !bytes && !config && glue.loaded(key)) {
    const { loadMs, source } = preloaded;
    preloaded = null;
    return [{ ...toObject(glue.info(key)), loadMs, source }];
  }
  const parse = (data) => ({ ...toObject(glue.load(key, data, what, name ?? undefined, fields, fileSize ?? undefined, config ?? undefined)), loadMs: Math.round(performance.now() - start) });
  if (bytes) return [{ ...parse(bytes), source: "memory" }];

  const cache = sha256 ? await openCache() : null;
  const k = cache ? cacheKey(url, sha256) : null;
  if (cache) {
    const early = earlyReads.get(k);
    earlyReads.delete(k);
    const stored = (await (early ?? readCached(cache, k))) ?? fetchedNotKept.get(k) ?? null;
    if (stored) {
      try {
        return [{ ...parse(stored), source: "cache" }];
      } catch {
        await cache.delete(k); // damaged in storage: fetch it again
      }
    }
  }
  const data = new Uint8Array(await (await fetchOk(url, `vocabulary ${what}`)).arrayBuffer());
  const info = parse(data);
  if (cache) {
    fetchedNotKept.set(k, data);
    // Kept with its payload stored uncompressed and a text index added (an .atok file still,
    // checked as any): a later visit skips the decompression and, until a longer text comes,
    // the text table (~50-70 ms of its first count).  Made once the worker is idle (making the
    // index takes ~0.3 s of Python), so that no answer waits for it.
    whenIdle(async () => {
      let kept = data;
      try {
        kept = bufferOf(glue.uncompressed(data), "u8");
      } catch {} // (not an .atok file: kept as it came)
      try {
        await cache.put(k, new Response(kept, { headers: { "Content-Type": "application/octet-stream" } }));
      } catch (err) {
        console.warn(`anytok: could not keep ${what} in Cache Storage: ${err.message}`);
      }
      fetchedNotKept.delete(k);
    });
  }
  return [{ ...info, source: "network" }];
}

// --- token tries, kept between pages and processes ----------------------------------------

// A constraint over a large vocabulary needs the vocabulary's token trie and the slicer's parts
// (anytok/constrain/trie_cache.py), which natively are kept in a file between processes, in a
// cache folder.  Here that folder is a folder of Pyodide's file system:
//   - under Node, the cache folder itself (node_worker.mjs's anytokCacheFolder, mounted), so
//     that Node processes and native Python share the same files;
//   - in a page, a folder in memory whose files are kept in Cache Storage: before a tokenizer's
//     first matcher its file (named by a SHA-256 of the vocabulary, which Python computes) is
//     put in the folder if Cache Storage has it; after matcher calls, once the worker is idle,
//     a file Python wrote or rewrote there (the trie; then again with the slicer's parts, by
//     the first mask that needed them) is stored.
// Python checks a file's key and layout when it reads it: a damaged file is built again and
// replaced.  Without either (Cache Storage unavailable, ANYTOK_CACHE_DIR=off), every worker
// builds its own, as Python without a cache folder does.
const TRIE_CACHE = "anytok-trie-v1";
const TRIE_DIR = "/tmp/anytok-trie";
let trieMode; // undefined until the first matcher: "disk", "cache" or null
const trieStored = new Map(); // file name -> size:mtime of the copy Cache Storage has
const trieChecks = new Set(); // tokenizer keys whose file is looked at once the worker is idle
const matcherKeys = new Map(); // matcher id -> its tokenizer's key

async function openTrieCache() {
  try {
    return self.caches && CACHEABLE ? await caches.open(TRIE_CACHE) : null;
  } catch {
    return null;
  }
}

const trieURL = (name) => new URL(`anytok-trie/${name}`, HERE).href;

function fileStamp(py, path) {
  try {
    const s = py.FS.stat(path);
    return `${s.size}:${+s.mtime}`;
  } catch {
    return null; // (no such file)
  }
}

function setUpTrieFolder(py) {
  if (trieMode !== undefined) return;
  trieMode = null;
  try {
    if (self.anytokCacheFolder) {
      py.FS.mkdirTree(TRIE_DIR);
      py.FS.mount(py.FS.filesystems.NODEFS, { root: self.anytokCacheFolder() }, TRIE_DIR);
      trieMode = "disk";
    } else if (self.caches && CACHEABLE) {
      trieMode = "cache";
    }
  } catch (err) {
    console.warn(`anytok: token tries will not be kept: ${err.message}`);
  }
}

async function restoreTrie(py, glue, key) {
  setUpTrieFolder(py);
  if (!trieMode) return;
  const name = glue.constrain_trie_file(key, TRIE_DIR);
  const path = `${TRIE_DIR}/${name}`;
  if (trieMode !== "cache" || !name || fileStamp(py, path)) return;
  const cache = await openTrieCache();
  try {
    const hit = await cache?.match(trieURL(name));
    if (!hit) return;
    py.FS.writeFile(path, new Uint8Array(await hit.arrayBuffer()));
    trieStored.set(name, fileStamp(py, path));
  } catch (err) {
    console.warn(`anytok: could not read a token trie from Cache Storage: ${err.message}`);
  }
}

function trieOf(glue, key) {
  const got = glue.constrain_trie(key);
  try {
    return got ? got.toJs() : [null, null];
  } finally {
    got?.destroy?.();
  }
}

function keepTrie(key) {
  if (trieMode !== "cache" || key === undefined || trieChecks.has(key)) return;
  trieChecks.add(key);
  whenIdle(async () => {
    trieChecks.delete(key);
    const { py, glue } = await ready();
    const [path] = trieOf(glue, key);
    const name = path?.split("/").pop();
    const stamp = path ? fileStamp(py, path) : null;
    if (!stamp || trieStored.get(name) === stamp) return;
    const cache = await openTrieCache();
    try {
      await cache?.put(trieURL(name), new Response(py.FS.readFile(path), { headers: { "Content-Type": "application/octet-stream" } }));
      trieStored.set(name, stamp);
    } catch (err) {
      console.warn(`anytok: could not keep a token trie in Cache Storage: ${err.message}`);
    }
  });
}

// --- conversions ----------------------------------------------------------------------------

function toObject(proxy) {
  try {
    return proxy.toJs({ dict_converter: Object.fromEntries });
  } finally {
    proxy.destroy();
  }
}

// A buffer from Python (an array('i') as "i32", bytes as "u8") -> a typed array of its own,
// which the page receives without a copy.
function bufferOf(proxy, type) {
  const view = proxy.getBuffer(type);
  try {
    return view.data.slice();
  } finally {
    view.release();
    proxy.destroy();
  }
}

const int32s = (proxy) => bufferOf(proxy, "i32");
// ignoreBOM: a leading U+FEFF is text, as in Python's decode (TextDecoder drops it by default).
const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });
const bytesOf = (proxy) => bufferOf(proxy, "u8");

function strings(proxy) {
  try {
    return proxy.toJs();
  } finally {
    proxy.destroy();
  }
}

const specials = (options) => [
  options?.allowedSpecial ?? undefined,
  options?.disallowedSpecial ?? undefined,
  options?.addSpecialTokens ?? undefined,
];


// --- requests -------------------------------------------------------------------------------

const OPS = {
  async init(args) {
    runtime ??= boot(args);
    const { glue, timings } = await runtime;
    return [{ ...toObject(glue.runtime()), ...timings }];
  },
  load: (args) => loadVocab(args),
  async loaded({ key }) {
    const { glue } = await ready();
    return [glue.loaded(key)];
  },
  async encode({ key, text, options }) {
    const { glue } = await ready();
    const ids = int32s(glue.encode(key, text, ...specials(options)));
    return [ids, [ids.buffer]];
  },
  // ids and UTF-16 offsets, flat (id, start, end per token): one Int32Array, sent without a copy.
  async encodeOffsets({ key, text, options }) {
    const { glue } = await ready();
    const flat = int32s(glue.encode_offsets(key, text, ...specials(options)));
    return [flat, [flat.buffer]];
  },
  async count({ key, text, options }) {
    const { glue } = await ready();
    return [glue.count(key, text, ...specials(options))];
  },
  async countBatch({ key, texts, options }) {
    const { glue } = await ready();
    const counts = int32s(glue.count_batch(key, texts, ...specials(options)));
    return [counts, [counts.buffer]];
  },
  async window({ key, block, overlap, final, withIds, checkSpecial }) {
    const { glue } = await ready();
    const proxy = glue.window(key, block, overlap, final, withIds, checkSpecial);
    if (proxy === undefined || proxy === null) return [null];
    try {
      const out = { total: proxy.get("total") ?? null };
      const transfer = [];
      for (const name of ["ids", "headOffsets", "headCounts", "tailOffsets", "tailCounts"]) {
        const value = proxy.pop(name);
        if (value === undefined || value === null) continue;
        out[name] = int32s(value);
        transfer.push(out[name].buffer);
      }
      return [out, transfer];
    } finally {
      proxy.destroy();
    }
  },
  async clearPieceCache({ key }) {
    const { glue } = await ready();
    return [glue.clear_piece_cache(key)];
  },
  async tokenize({ key, text, options }) {
    const { glue } = await ready();
    const pairs = int32s(glue.tokenize(key, text, ...specials(options)));
    return [pairs, [pairs.buffer]];
  },
  async decode({ key, ids, errors }) {
    const { glue } = await ready();
    // A tiktoken-style encoding's bytes, decoded here: TextDecoder replaces invalid UTF-8 as
    // Python's "replace" does (one U+FFFD per maximal subpart, Unicode's recommended practice),
    // and it is several times faster than Python's decode plus the conversion of its str.
    const bytes = (errors ?? "replace") === "replace" ? glue.decode_utf8(key, ids) : null;
    if (bytes == null) return [glue.decode(key, ids, errors ?? "replace")];
    const view = bytes.getBuffer("u8");
    try {
      return [UTF8.decode(view.data)];
    } finally {
      view.release();
      bytes.destroy();
    }
  },
  // Every token's bytes and where each starts, for the page to decode on its own (anytok.js's
  // ByteTable); null for tokenizers that are not tiktoken-style encodings.  The offsets are summed
  // here (Python's per-token calls are slow under Pyodide); all is sent without a copy.
  async decodeTable({ key }) {
    const { glue } = await ready();
    const proxy = glue.decode_table(key);
    if (proxy === undefined || proxy === null) return [null];
    try {
      const bytes = bytesOf(proxy.pop("bytes"));
      const empty = int32s(proxy.pop("empty"));
      const lengths = proxy.pop("lengths");
      const view = lengths.getBuffer("u32");
      let offsets;
      try {
        const sizes = view.data;
        offsets = new Uint32Array(sizes.length + 1);
        let at = 0;
        for (let i = 0; i < sizes.length; i++) offsets[i + 1] = at += sizes[i];
      } finally {
        view.release();
        lengths.destroy();
      }
      return [{ bytes, offsets, empty }, [bytes.buffer, offsets.buffer, empty.buffer]];
    } finally {
      proxy.destroy();
    }
  },
  // Tokens' own bytes (worker_glue.token_bytes), one Uint8Array each, or a special token's name.
  async tokenBytes({ key, ids }) {
    const { glue } = await ready();
    const proxy = glue.token_bytes(key, ids);
    try {
      const bytes = bytesOf(proxy.pop("bytes"));
      const lengths = int32s(proxy.pop("lengths"));
      const names = strings(proxy.pop("names"));
      const out = [];
      let at = 0;
      let k = 0;
      for (const n of lengths) {
        if (n < 0) {
          out.push(names[k++]);
        } else {
          out.push(bytes.slice(at, at + n));
          at += n;
        }
      }
      return [out];
    } finally {
      proxy.destroy();
    }
  },
  async constrainNew({ key, kind, spec, eos }) {
    const { py, glue } = await ready();
    await restoreTrie(py, glue, key);
    const id = glue.constrain_new(key, kind, spec, eos ?? undefined);
    matcherKeys.set(id, key);
    keepTrie(key);
    return [{ id, trie: trieOf(glue, key)[1] ?? "built" }];
  },
  async constrainCall({ matcher, op, arg }) {
    const { glue } = await ready();
    const result = glue.constrain_call(matcher, op, arg ?? undefined);
    if (op === "free") matcherKeys.delete(matcher);
    if (op === "mask" || op === "allowed") keepTrie(matcherKeys.get(matcher)); // (the slicer, once built)
    if (op === "mask") {
      // Little-endian 32-bit words, one bit per token id (llguidance's layout).
      const words = new Uint32Array(bytesOf(result).buffer);
      return [words, [words.buffer]];
    }
    if (op === "allowed" || op === "forced") {
      const ids = int32s(result);
      return [ids, [ids.buffer]];
    }
    return [result ?? null];
  },
  async toAtok({ key }) {
    const { glue } = await ready();
    const data = bytesOf(glue.to_atok(key));
    return [data, [data.buffer]];
  },
  async chat({ key, op, payload }) {
    const { glue } = await ready();
    return [JSON.parse(glue.chat(key, op, JSON.stringify(payload)))];
  },
  async chatTemplate({ key, op, payload }) {
    const { glue } = await ready();
    return [JSON.parse(glue.chat_template(key, op, JSON.stringify(payload)))];
  },
  async countTillLimit({ key, text, limit }) {
    const { glue } = await ready();
    return [glue.count_till_limit(key, text, limit) ?? null];
  },
  async chunks({ key, text, maxTokens, overlap }) {
    const { glue } = await ready();
    return [strings(glue.chunks(key, text, maxTokens, overlap ?? 0))];
  },
  async splitByTokens({ key, text, maxTokens }) {
    const { glue } = await ready();
    return [strings(glue.split_by_tokens(key, text, maxTokens))];
  },
  async train({ texts, options }, id) {
    const { glue } = await ready();
    const report = (json) => self.postMessage({ id, progress: JSON.parse(json) });
    const proxy = glue.train(texts, JSON.stringify(options ?? {}), report);
    try {
      const atok = bytesOf(proxy.pop("atok"));
      const merges = int32s(proxy.pop("merges"));
      const result = { ...proxy.toJs({ dict_converter: Object.fromEntries }), atok, merges };
      return [result, [atok.buffer, merges.buffer]];
    } finally {
      proxy.destroy();
    }
  },
  // The other kinds (SentencePiece models, tokenizers' WordPiece and Unigram): the .model
  // bytes or the tokenizer.json text, with the same progress messages as `train`.
  async trainKind({ texts, options }, id) {
    const { glue } = await ready();
    const report = (json) => self.postMessage({ id, progress: JSON.parse(json) });
    const proxy = glue.train_kind(texts, JSON.stringify(options ?? {}), report);
    try {
      const model = proxy.has("model") ? bytesOf(proxy.pop("model")) : null;
      const result = { ...proxy.toJs({ dict_converter: Object.fromEntries }) };
      if (model) result.model = model;
      return [result, model ? [model.buffer] : []];
    } finally {
      proxy.destroy();
    }
  },
};
