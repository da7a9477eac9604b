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
// There is no Cache Storage: no start-up snapshot and no vocabulary cache (every start is a
// normal one, and the bundled vocabularies are read from the package folder).

import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
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

await import(here.href);

self.anytokFetchPart = (url) => {
  const file = fileURL(url);
  if (!file) throw new Error(`could not fetch ${url}: only files are read under Node`);
  const bytes = readFileSync(file);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};

parentPort.on("message", (data) => self.onmessage({ data }));
