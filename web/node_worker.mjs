// anytok's worker under Node (>= 20): worker.js, unchanged, in a `worker_threads` Worker.
//
// anytok.js starts this file (next to worker.js) when there is no DOM-style `Worker`; it gives
// worker.js what a browser's worker scope has and Node's lacks:
//   - `self`, `self.location` (worker.js's URL) and `self.onmessage` / `self.postMessage`,
//     carried over `parentPort`;
//   - `fetch` of file: URLs, read from disk (Node's own fetch has no file: URLs); other URLs go
//     to Node's fetch;
//   - the synchronous fetch of a lazily loaded part (worker.js uses XMLHttpRequest), read from
//     disk;
//   - file paths for Pyodide, which reads its own files with `fs` under Node.
//   - the cache folder, where worker.js keeps constraints' token tries as native anytok does
//     (the same files: anytok/constrain/trie_cache.py);
//   - a Cache Storage for the start-up snapshot only, kept in a folder on disk (below), so that
//     a second Node process restores Python with anytok imported and its first bundled
//     encoding loaded instead of doing all three again, as a page's second visit does (one
//     snapshot per encoding loaded first; worker.js's `preloaded`).  The vocabularies need no
//     cache: they are read from the package folder.
//
// The snapshot folder: $ANYTOK_CACHE_DIR, else $XDG_CACHE_HOME/anytok, else ~/.cache/anytok
// (one file per snapshot, named by the sha256 of its key, which already names every file it
// depends on; worker.js checks the Pyodide version and a checksum before restoring, and falls
// back to a normal start; the four most recently used are kept, older ones removed).
// ANYTOK_CACHE_DIR=off, or `AnyTok.load({ snapshot: false })`, keeps nothing on disk.

import { createHash } from "node:crypto";
import zlib from "node:zlib";
import { mkdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parentPort, workerData } from "node:worker_threads";

const here = new URL(workerData.workerURL);

function fileURL(input) {
  const url = new URL(String(input instanceof Request ? input.url : input), here);
  if (url.protocol !== "file:") return null;
  url.search = "";
  url.hash = "";
  return url;
}

// A path with a trailing separator for a folder URL (Pyodide's indexURL).
function pathOf(url) {
  const u = fileURL(url);
  if (!u) return url;
  const path = fileURLToPath(u);
  return u.pathname.endsWith("/") && !path.endsWith("/") ? `${path}/` : path;
}

globalThis.self = globalThis;
self.location = { href: here.href };
self.postMessage = (message, transfer) => parentPort.postMessage(message, transfer ?? []);
self.anytokNodePath = pathOf;

const nodeFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const url = fileURL(input);
  if (!url) return nodeFetch(input, init);
  const bytes = await readFile(url); // (an ENOENT error names the path: fetchOk reports it)
  return new Response(bytes, { status: 200 });
};

// The part of Cache Storage's interface worker.js uses (open, match, put, delete), on disk.
function cacheRoot() {
  const env = process.env.ANYTOK_CACHE_DIR;
  if (env === "off" || env === "") return null;
  if (env) return env;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "anytok");
}

class DiskCache {
  static KEEP = 4;

  constructor(dir) {
    this.dir = dir;
  }

  path(key) {
    const url = String(key instanceof Request ? key.url : key);
    return join(this.dir, createHash("sha256").update(url).digest("hex"));
  }

  async match(key) {
    const path = this.path(key);
    try {
      const [meta, body] = await Promise.all([readFile(`${path}.json`, "utf8"), readFile(path)]);
      // Not a Response: reading a 36 MB body through one copies it twice (~100 ms).
      const bytes = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength
        ? body.buffer : body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength);
      const now = new Date();
      utimes(path, now, now).catch(() => {}); // used: the last to be pruned (put)
      return { headers: new Headers(JSON.parse(meta).headers), arrayBuffer: async () => bytes };
    } catch {
      return undefined; // none (or half written by a process that died: the checksum fails too)
    }
  }

  async put(key, response) {
    const path = this.path(key);
    const body = new Uint8Array(await response.arrayBuffer());
    const headers = Object.fromEntries(response.headers.entries());
    await mkdir(this.dir, { recursive: true });
    // Written under temporary names, then renamed: a reader never sees half a file.
    const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(`${tmp}.json`, JSON.stringify({ key: String(key), headers }));
    await writeFile(tmp, body);
    await rename(`${tmp}.json`, `${path}.json`);
    await rename(tmp, path);
    await this.prune().catch(() => {});
  }

  // At most KEEP snapshots stay in the folder (one per encoding loaded first, and those of
  // other anytok or Pyodide versions): the least recently made or restored go first.
  async prune() {
    const names = (await readdir(this.dir)).filter((n) => /^[0-9a-f]{64}$/.test(n));
    if (names.length <= DiskCache.KEEP) return;
    const dated = await Promise.all(names.map(async (n) => [(await stat(join(this.dir, n))).mtimeMs, n]));
    dated.sort((a, b) => b[0] - a[0]);
    await Promise.all(dated.slice(DiskCache.KEEP).map(([, n]) => Promise.all([
      rm(join(this.dir, n), { force: true }), rm(join(this.dir, `${n}.json`), { force: true })])));
  }

  async delete(key) {
    const path = this.path(key);
    await Promise.all([rm(path, { force: true }), rm(`${path}.json`, { force: true })]);
    return true;
  }
}

// A snapshot made after the first vocabulary's load (worker.js's `preloaded`) holds a heap that
// grew past Pyodide's initial 30 MiB, which Pyodide 314.0.7 cannot restore by itself: its wasm
// defines its own memory (the INITIAL_MEMORY it sets for a restore is not read) and it copies
// the snapshot into that memory's view, which throws for a longer heap.  So during a restore
// (worker.js sets anytokRestore: the Promise of the heap, and `fill`, which checks and unpacks
// it), the instance's memory is grown to the heap's size before Pyodide makes its views of it.
// The heap is filled here too, while V8 compiles the wasm in its own threads.
async function instantiateFor(original, args) {
  const restore = self.anytokRestore;
  const made = original.apply(WebAssembly, args);
  if (!restore) return made;
  // A damaged snapshot must not fail the instantiation (Pyodide would log it and never settle):
  // its heap is left without Pyodide's magic number instead, so that the restore throws and
  // worker.js starts anew (naming fill's error).
  const damaged = await restore.fill().then(() => false, () => true);
  const result = await made;
  const heap = await restore.heap;
  const memory = (result?.instance ?? result)?.exports?.memory;
  if (memory instanceof WebAssembly.Memory) {
    const missing = heap.length - memory.buffer.byteLength;
    if (missing > 0) memory.grow(Math.ceil(missing / 65536));
  }
  if (damaged) heap.fill(0, 0, 16);
  return result;
}

for (const name of ["instantiate", "instantiateStreaming"]) {
  const original = WebAssembly[name];
  if (typeof original === "function") WebAssembly[name] = (...args) => instantiateFor(original, args);
}

// The check of a stored snapshot (worker.js's snapshotChecksum): zlib's CRC-32, native, where
// Node has it (>= 20.15), else SHA-1.
self.anytokChecksum = zlib.crc32
  ? (bytes) => `${bytes.length}:crc32:${zlib.crc32(bytes).toString(16)}`
  : (bytes) => `${bytes.length}:sha1:${createHash("sha1").update(bytes).digest("hex")}`;

const root = cacheRoot();
if (root) {
  // worker.js: where constraints' token tries go, the folder native anytok uses (made when first needed)
  self.anytokCacheFolder = () => {
    mkdirSync(root, { recursive: true });
    return root;
  };
  self.anytokDiskCache = true; // worker.js: keep the start-up snapshot (only) in these caches
  self.anytokSnapshotMaxBytes = 2 ** 30; // (a restore grows the memory: grownForRestore)
  self.caches = {
    open: async (name) => new DiskCache(join(root, name)),
    delete: async (name) => {
      await rm(join(root, name), { recursive: true, force: true });
      return true;
    },
  };
}

await import(here.href);

self.anytokFetchPart = (url) => {
  const file = fileURL(url);
  if (!file) throw new Error(`could not fetch ${url}: only files are read under Node`);
  const bytes = readFileSync(file);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};

parentPort.on("message", (data) => self.onmessage({ data }));
