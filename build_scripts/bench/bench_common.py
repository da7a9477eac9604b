"""What the benchmark scripts (and the tests) share: where the corpora are, and the CPU's name."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The four corpora of ../shared/corpora (ANYTOK_CORPORA names another folder), by short key.
CORPORA_DIR = Path(os.environ.get("ANYTOK_CORPORA", ROOT.parent / "shared" / "corpora"))
CORPORA = {
    "en": "en_emma.txt",
    "code": "code_cpython_stdlib.txt",
    "zh": "zh_peoplesdaily_1998.txt",
    "ja": "ja_debian_reference.txt",
}


def rerun_under_pyodide(script: Path, *args: str) -> None:
    """Runs the benchmark `script` again with `args` under Pyodide's own CPython in Node
    (build_scripts/pyodide_run.mjs), the checkout mounted at /host; raises if Pyodide is not
    installed yet or the run fails."""
    pyodide = ROOT / "web" / "node_modules" / "pyodide"
    if not pyodide.is_dir():
        raise SystemExit(f"{pyodide} is missing: run build_scripts/build_web.py (or the tests) once")
    subprocess.run(["node", str(ROOT / "build_scripts" / "pyodide_run.mjs"), str(pyodide), str(ROOT),
                    str(script), *args], check=True)


def corpora_for_pyodide(source: Path, files, name: str) -> str:
    """Copies `files` of the folder `source` into the checkout's .cache/`name` (Pyodide sees only
    the checkout, mounted at /host) and returns that folder's path as Pyodide sees it."""
    copy = ROOT / ".cache" / name
    copy.mkdir(parents=True, exist_ok=True)
    for file in files:
        (copy / file).write_bytes((source / file).read_bytes())
    return f"/host/.cache/{name}"


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo ("unknown CPU" where there is none)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


# --- the browser benchmarks' page (bench_train_browser.py, bench_browser_workers.py) ---------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    # Belt and braces: no host name but 127.0.0.1 resolves.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def guard_into(outside: list[str]):
    """A Playwright route handler that lets requests for 127.0.0.1 through and aborts any other,
    appending its URL to `outside`."""

    def guard(route) -> None:
        if route.request.url.startswith("http://127.0.0.1:"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    return guard


# Before a timed call in a page: collect the page's garbage (with GC_ARGS) and idle SETTLE_MS,
# untimed, so that no call pays for the collection of what earlier calls left (js-tiktoken's
# encode leaves ~10^6 objects; on this 2-core VM the page's collector then competes with the
# workers, and the next call ran up to 40 % slower).  Done alike for every tokenizer.
GC_ARGS = ["--js-flags=--expose-gc"]
SETTLE_MS = 250


def settle(page) -> None:
    page.evaluate("(ms) => { globalThis.gc?.(); return new Promise((done) => setTimeout(done, ms)); }", SETTLE_MS)


@contextlib.contextmanager
def dist_page(extra_args: list[str] = ()):
    """A headless Chromium page at web/dist/ (built, then served from 127.0.0.1 by serve_demo's
    handler), every request for another host aborted; raises at the end if there was one.
    `extra_args`: more Chromium flags."""
    import threading

    from playwright.sync_api import sync_playwright

    import build_web
    from serve_demo import make_server

    build_web.build(quiet=True)
    httpd = make_server(0, quiet=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    outside: list[str] = []
    guard = guard_into(outside)

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra_args])
            ctx = browser.new_context()
            ctx.route("**/*", guard)
            page = ctx.new_page()
            page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/anytok-assets.json")
            yield page
            browser.close()
    finally:
        httpd.shutdown()
    if outside:
        raise SystemExit(f"requests outside 127.0.0.1: {outside[:5]}")


def pyodide_for(node: str | None, script: str) -> Path:
    """web/node_modules/pyodide, once it and `node` are there (build_scripts/pyodide_run.mjs
    runs a script under Pyodide with both); else exit naming what `script` needs."""
    pyodide = ROOT / "web" / "node_modules" / "pyodide"
    if not (pyodide / "pyodide.mjs").exists() or not node:
        raise SystemExit(f"{script}: needs node and web/node_modules/pyodide (build_web.py)")
    return pyodide


def run_header(script: str) -> str:
    """A benchmark's first line: when, on what, and the command."""
    import platform
    import sys
    import time

    return (f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {cpu_model()}, Python "
            f"{platform.python_version()}, `{script} {' '.join(sys.argv[1:])}`")
