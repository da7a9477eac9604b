"""First-visit bytes: what a page that uses anytok downloads before its first count of o200k_base.

    python build_scripts/bench/bench_first_visit.py [--no-gzip] [--after-ms 0]

A fresh headless Chromium profile (Debian's /usr/bin/chromium: empty HTTP cache, empty Cache
Storage) opens a bare page of serve_demo.py's origin that imports `/anytok.js`, loads o200k_base
and counts "hello world".  Every response up to that count is listed, the worker's fetches
included, with the bytes of its body as they crossed the wire (compressed when the server
compressed it: Playwright's `request.sizes()`, i.e. Chromium's encoded body size) and its headers,
then the sum.  `--no-gzip` serves everything uncompressed (a server that sends no
Content-Encoding); `--after-ms N` also lists what was fetched in the N ms after the count (the
work the page leaves for when it is idle).  The bare page itself is produced by the harness and
not counted.  Nothing is fetched from outside 127.0.0.1.

A script, not a test: prints a markdown table with the date, the machine and the command.
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import sys
import threading
from urllib.parse import urlsplit

from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
import bench_common  # noqa: E402
import build_web  # noqa: E402
import serve_demo  # noqa: E402

PAGE = "__first_visit__.html"
PAGE_HTML = """<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>first visit</title></head><body><script type="module">
window.firstCount = (async () => {
  const { AnyTok } = await import("/anytok.js");
  const tok = await AnyTok.load({ encoding: "o200k_base" });
  return await tok.count("hello world");
})();
</script></body></html>"""


def measure(browser, url: str, after_ms: int) -> tuple[list[dict], list[dict], int, list[str]]:
    context = browser.new_context()
    context.set_default_timeout(180_000)
    outside: list[str] = []

    def route(r):
        u = r.request.url
        if urlsplit(u).hostname != "127.0.0.1":
            outside.append(u)
            r.abort()
        elif urlsplit(u).path == "/" + PAGE:
            r.fulfill(status=200, content_type="text/html; charset=utf-8", body=PAGE_HTML)
        else:
            r.continue_()

    context.route("**/*", route)
    done: list[dict] = []
    counted = threading.Event()

    def finished(request):
        if not request.url.startswith("http") or urlsplit(request.url).path == "/" + PAGE:
            return
        sizes = request.sizes()
        response = request.response()
        if sizes["responseBodySize"] == 0 and response is not None and response.status == 200:
            # Chromium reports no body size for a worker's own script: its Content-Length then
            # (the bytes sent, compressed or not).
            sizes["responseBodySize"] = int(response.headers.get("content-length") or 0)
        done.append({
            "path": urlsplit(request.url).path, "status": response.status if response else None,
            "encoding": (response.headers.get("content-encoding") if response else None) or "",
            "body": sizes["responseBodySize"], "headers": sizes["responseHeadersSize"] + sizes["requestHeadersSize"],
            "after": counted.is_set(),
        })

    context.on("requestfinished", finished)
    page = context.new_page()
    page.goto(url + PAGE)
    count = page.evaluate("window.firstCount")
    counted.set()
    if after_ms:
        page.wait_for_timeout(after_ms)
    else:
        page.wait_for_timeout(200)  # lets the last requestfinished events of the count arrive
    context.close()
    before = [d for d in done if not d["after"]]
    after = [d for d in done if d["after"]]
    return before, after, count, outside


def table(rows: list[dict]) -> None:
    print("| file | status | Content-Encoding | body bytes on the wire | headers |")
    print("|---|---|---|---:|---:|")
    for d in sorted(rows, key=lambda d: -d["body"]):
        print(f"| `{d['path']}` | {d['status']} | {d['encoding'] or '—'} | {d['body']:,} | {d['headers']:,} |")
    body = sum(d["body"] for d in rows)
    heads = sum(d["headers"] for d in rows)
    print(f"| **total ({len(rows)} requests)** | | | **{body:,}** ({body / 1e6:.2f} MB) | {heads:,} |")
    print(f"\nOn the wire, bodies and headers: **{(body + heads) / 1e6:.2f} MB**.")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-gzip", action="store_true", help="serve every file uncompressed")
    ap.add_argument("--after-ms", type=int, default=0, help="also list what is fetched this long after the count")
    args = ap.parse_args(argv)

    from playwright.sync_api import sync_playwright

    build_web.build(quiet=True)
    httpd = serve_demo.make_server(0, quiet=True, compress=not args.no_gzip)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=bench_common.CHROMIUM, args=bench_common.CHROMIUM_ARGS)
        before, after, count, outside = measure(browser, url, args.after_ms)
        version = browser.version
        browser.close()
    httpd.shutdown()
    if outside:
        raise SystemExit(f"bench_first_visit: requests that would have left 127.0.0.1: {outside}")
    if count != 2:
        raise SystemExit(f"bench_first_visit: count('hello world') gave {count}, not 2")
    command = "python " + " ".join(shlex.quote(a) for a in ["build_scripts/bench/bench_first_visit.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"First visit, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC: headless Chromium {version}, "
          f"empty profile, Pyodide {build_web.pinned_pyodide_version()}, serve_demo.py"
          f"{' without compression' if args.no_gzip else ''}; navigation to the first count of o200k_base.")
    print(f"Command: `{command}`.\n")
    table(before)
    if args.after_ms:
        print(f"\nFetched in the {args.after_ms} ms after the count:\n")
        table(after) if after else print("nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
