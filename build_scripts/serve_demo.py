"""Serve anytok's browser demo from this checkout, offline.

    python build_scripts/serve_demo.py [--port 8000]

Builds whatever web/dist/ lacks (see build_web.py), then serves it at http://127.0.0.1:PORT/:
the demo at `/`, the ES-module shim at `/anytok.js`.  `--port 0` picks a free port; the first
line printed is always `anytok demo: <url>`, so a test harness can read it.

Caching: see `cache_control` (the same rules suit any server).  Python 3.11's `http.server` guesses no type for `.mjs` and `.wasm`; browsers refuse to run
either without the right one, so the types are set here explicitly.

Compression, as production servers do it (nginx's `brotli_static` / `gzip_types`, a CDN's
automatic compression), with `Vary: Accept-Encoding`: a file with a `<name>.br` next to it
(build_web.py makes them for the big files of the first visit: Pyodide's wasm and asm.mjs, the
stored zip of the start's standard library) is sent as that brotli stream to a client that
accepts br (`Content-Encoding: br`); it and the files of the types in `COMPRESSIBLE` (wasm,
JavaScript, JSON, Python source, ...) are otherwise sent gzipped, compressed here and kept in
memory per file version, to a client that accepts gzip.  Other zip archives (the wheel, the lazy
parts) and `.atok` vocabularies are compressed already and sent as they are.  `--no-gzip` sends
everything uncompressed.
docs/browser-serving.md says what any server should send.
"""

from __future__ import annotations

import argparse
import email.utils
import functools
import gzip
import http.server
import io
import os
import re
import threading
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
import build_web  # noqa: E402

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".ts": "text/plain; charset=utf-8",
    ".py": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".wasm": "application/wasm",
    ".whl": "application/octet-stream",
    ".zip": "application/octet-stream",
    ".atok": "application/octet-stream",
    ".png": "image/png",
    ".svg": "image/svg+xml",
}


# Sent gzipped to a client that accepts it (and any file with a .br next to it).  (.atok, .zip
# and .whl are compressed already: gzip would gain nothing there.)
COMPRESSIBLE = {".html", ".js", ".mjs", ".css", ".json", ".map", ".ts", ".py", ".txt", ".wasm", ".svg", ".pyc"}
GZIP_LEVEL = 6  # what servers compressing on the fly use; -9 gains <1 % on the wasm for twice the time
_gzipped: dict[tuple[str, int, int], bytes] = {}
_gzip_lock = threading.Lock()


def gzipped(path: str, st: os.stat_result) -> bytes:
    """The gzip of the file at `path` as it is now (kept per path, size and mtime)."""
    key = (path, st.st_size, st.st_mtime_ns)
    with _gzip_lock:
        data = _gzipped.get(key)
        if data is None:
            with open(path, "rb") as f:
                data = gzip.compress(f.read(), GZIP_LEVEL, mtime=0)
            for old in [k for k in _gzipped if k[0] == path]:
                del _gzipped[old]
            _gzipped[key] = data
    return data


# A URL that names its content (a `?v=<hash>` query, or a file name ending in `-<16 hex digits>`
# before its extension, as build_web.py writes them) never changes: it is cached for good.
IMMUTABLE = re.compile(r"[?&]v=[0-9a-f]{16}(&|$)|-[0-9a-f]{16}\.[a-z]+(\?|$)")


def cache_control(path: str) -> str:
    """The Cache-Control header for a request path.  Content-named URLs: cached for a year,
    never revalidated.  Everything else (the page, anytok.js, the manifest, Pyodide's files):
    revalidated on every use (a 304 when unchanged), so a rebuilt asset is never served stale;
    Chromium still keeps the compiled wasm of a revalidated response.  Vocabularies are kept
    across visits by the page itself, in Cache Storage, keyed by their sha256."""
    return "public, max-age=31536000, immutable" if IMMUTABLE.search(path) else "no-cache"


class DemoHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {"": "application/octet-stream", **TYPES}
    quiet = False
    compress = True

    def end_headers(self) -> None:
        self.send_header("Cache-Control", cache_control(self.path))
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def send_head(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            return super().send_head()
        br = path + ".br"
        has_br = os.path.isfile(br) and os.stat(br).st_mtime_ns >= os.stat(path).st_mtime_ns
        if not self.compress or not (has_br or os.path.splitext(path)[1].lower() in COMPRESSIBLE):
            return super().send_head()
        accepts = {a.split(";")[0].strip().lower() for a in self.headers.get("Accept-Encoding", "").split(",")}
        if has_br and "br" in accepts:
            encoding = "br"
        elif "gzip" in accepts:
            encoding = "gzip"
        else:
            return super().send_head()
        st = os.stat(path)
        since = self.headers.get("If-Modified-Since")
        if since and "If-None-Match" not in self.headers:
            try:
                when = email.utils.parsedate_to_datetime(since)
            except (TypeError, ValueError, IndexError, OverflowError):
                when = None
            if when is not None and when.tzinfo is not None and int(st.st_mtime) <= when.timestamp():
                self.send_response(http.HTTPStatus.NOT_MODIFIED)
                self.send_header("Vary", "Accept-Encoding")
                self.end_headers()
                return None
        if encoding == "br":
            with open(br, "rb") as f:
                body = f.read()
        else:
            body = gzipped(path, st)
        self.send_response(http.HTTPStatus.OK)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", encoding)
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", self.date_time_string(int(st.st_mtime)))
        self.end_headers()
        return io.BytesIO(body)


def make_server(port: int, host: str = "127.0.0.1", quiet: bool = False, compress: bool = True) -> http.server.ThreadingHTTPServer:
    """A server for web/dist/ (as it is), listening but not yet serving."""
    handler = functools.partial(type("Handler", (DemoHandler,), {"quiet": quiet, "compress": compress}),
                                directory=str(build_web.DIST))
    return http.server.ThreadingHTTPServer((host, port), handler)


def serve(port: int, host: str = "127.0.0.1", quiet: bool = False, build: bool = True, compress: bool = True) -> None:
    if build:
        build_web.build(quiet=True)
    with make_server(port, host, quiet, compress) as httpd:
        shown = "127.0.0.1" if host in ("127.0.0.1", "0.0.0.0") else host
        print(f"anytok demo: http://{shown}:{httpd.server_address[1]}/", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8000, help="0 = any free port (default 8000)")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    ap.add_argument("--quiet", action="store_true", help="do not log requests")
    ap.add_argument("--no-build", action="store_true", help="serve web/dist/ as it is")
    ap.add_argument("--no-gzip", action="store_true", help="send every file uncompressed")
    args = ap.parse_args(argv)
    serve(args.port, args.host, quiet=args.quiet, build=not args.no_build, compress=not args.no_gzip)
    return 0


if __name__ == "__main__":
    sys.exit(main())
