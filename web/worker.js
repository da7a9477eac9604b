// anytok's Web Worker: Pyodide and anytok, off the page's main thread.
//
// Started by anytok.js as a module worker.  Protocol, one answer per request:
//   page -> worker   { id, op, args }
//   worker -> page   { id, ok: true, result }  or  { id, ok: false, error }
// Requests run one at a time, in the order they arrived: Python is single-threaded, and the
// queue keeps a vocabulary load or a long encode from interleaving with anything else.  One
// worker holds any number of tokenizers, each under the key the page gave it.
//
// A `train` request also sends { id, progress } messages while it runs (counting: MB and MB/s;
// merging: done of total and an ETA).  It cannot be cancelled from in here: Python holds this
// thread until it returns, so no message is read meanwhile (Pyodide's interrupt buffer would
// need a SharedArrayBuffer, hence a cross-origin-isolated page).  anytok.js therefore trains in
// a worker of its own and cancels by terminating that worker.

const VOCAB_CACHE = "anytok-vocab-v1";

let runtime = null; // Promise of { py, glue }, set by "init"
let queue = Promise.resolve();

self.onmessage = (event) => {
  const { id, op, args } = event.data;
  queue = queue.then(async () => {
    try {
      const handler = OPS[op];
      if (!handler) throw new Error(`anytok worker: unknown request ${JSON.stringify(op)}`);
      const [result, transfer] = await handler(args, id);
      self.postMessage({ id, ok: true, result }, transfer ?? []);
    } catch (err) {
      self.postMessage({ id, ok: false, error: describe(err) });
    }
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
async function boot({ pyodideURL, stdlibURL, wheelURL, glueURL, gluePycURL }) {
  const start = performance.now();
  let booted;
  const { loadPyodide } = await import(new URL("pyodide.mjs", pyodideURL).href);
  const loaderMs = performance.now() - start;
  const options = { indexURL: pyodideURL, stdout: () => {}, stderr: (line) => console.warn(line) };
  let stdlibBlob = null;
  const [py, wheel, glueSource, gluePyc] = await Promise.all([
    (async () => {
      if (stdlibURL) {
        const zip = await (await fetchOk(stdlibURL, "Python's standard library")).blob();
        options.stdLibURL = stdlibBlob = URL.createObjectURL(zip);
      }
      const py = await loadPyodide(options);
      booted = performance.now();
      return py;
    })().finally(() => stdlibBlob && URL.revokeObjectURL(stdlibBlob)),
    fetchOk(wheelURL, "the anytok wheel").then((r) => r.arrayBuffer()),
    fetchOk(glueURL, "the worker's Python glue").then((r) => r.text()),
    gluePycURL ? fetchOk(gluePycURL, "the worker's compiled Python glue").then((r) => r.arrayBuffer()) : null,
  ]);
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
  const glue = py.pyimport("anytok_web_glue");
  // Where the start went (bench_browser.py prints it): the loader's import, the downloads of the
  // wasm and the stdlib (overlapping the rest), Pyodide's whole boot, anytok's install and import.
  const fetched = (suffix) => {
    const entry = performance.getEntriesByType?.("resource").find((e) => e.name.split("?")[0].endsWith(suffix));
    return entry ? Math.round(entry.responseEnd - entry.startTime) : null;
  };
  const timings = {
    pyodideMs: Math.round(booted - start),
    anytokMs: Math.round(performance.now() - booted),
    startMs: { loader: Math.round(loaderMs), wasmFetch: fetched("pyodide.asm.wasm"),
               stdlibFetch: stdlibURL ? fetched(new URL(stdlibURL).pathname) : fetched("python_stdlib.zip") },
  };
  return { py, glue, timings };
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
    return self.caches ? await caches.open(VOCAB_CACHE) : null;
  } catch {
    return null; // e.g. storage disabled: fall back to plain fetches
  }
}

function cacheKey(url, sha256) {
  const key = new URL(url);
  key.searchParams.set("anytok-sha256", sha256);
  return key.href;
}

async function loadVocab({ key, name, url, sha256, bytes, fileName }) {
  const { glue } = await ready();
  const what = url ? decodeURIComponent(new URL(url).pathname.split("/").pop()) : (fileName || "vocab file");
  const start = performance.now();
  const parse = (data) => ({ ...toObject(glue.load(key, data, what, name ?? undefined)), loadMs: Math.round(performance.now() - start) });
  if (bytes) return [{ ...parse(bytes), source: "memory" }];

  const cache = sha256 ? await openCache() : null;
  const k = cache ? cacheKey(url, sha256) : null;
  if (cache) {
    const hit = await cache.match(k);
    if (hit) {
      try {
        return [{ ...parse(new Uint8Array(await hit.arrayBuffer())), source: "cache" }];
      } catch {
        await cache.delete(k); // damaged in storage: fetch it again
      }
    }
  }
  const data = new Uint8Array(await (await fetchOk(url, `vocabulary ${what}`)).arrayBuffer());
  const info = parse(data);
  if (cache) {
    try {
      await cache.put(k, new Response(data, { headers: { "Content-Type": "application/octet-stream" } }));
    } catch (err) {
      console.warn(`anytok: could not keep ${what} in Cache Storage: ${err.message}`);
    }
  }
  return [{ ...info, source: "network" }];
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
    return [glue.decode(key, ids, errors ?? "replace")];
  },
  async toAtok({ key }) {
    const { glue } = await ready();
    const data = bytesOf(glue.to_atok(key));
    return [data, [data.buffer]];
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
};
