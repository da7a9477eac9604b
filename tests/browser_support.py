"""Helpers for the browser tests: the demo server, Debian's Chromium, and the network guard.

The demo server is the real one (`build_scripts/serve_demo.py --port 0`), started once per test
process.  Chromium is Debian's `/usr/bin/chromium`, driven by Playwright from PyPI (never
`playwright install`).  Every request not for 127.0.0.1 is aborted and recorded, and a test
fails if there was any.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# A Pyodide boot takes 2.5-5 s here; waits are generous because the machine is shared.
BOOT_TIMEOUT_MS = 90_000


class DemoServer:
    """`serve_demo.py --port 0` in a subprocess; `url` is where it listens."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "build_scripts" / "serve_demo.py"), "--port", "0", "--quiet"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if not line.startswith("anytok demo: "):
            self.proc.kill()
            raise RuntimeError(f"serve_demo.py did not start: {line!r} {self.proc.stderr.read()}")
        self.url = line.split(": ", 1)[1].strip()
        # Keep draining stderr so a chatty server can never block on a full pipe.
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return parts.scheme in ("http", "https", "ws") and parts.hostname == "127.0.0.1"


class NetworkGuard:
    """Routes a browser context: local requests go through, all others are aborted and kept."""

    def __init__(self, context) -> None:
        self.blocked: list[str] = []
        self.requests: list[str] = []
        context.route("**/*", self._route)

    def _route(self, route) -> None:
        url = route.request.url
        self.requests.append(url)
        if is_local(url):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def check(self) -> None:
        assert self.blocked == [], f"requests that would have left 127.0.0.1: {self.blocked}"


# Module fixtures of the browser tests (imported by each module): its demo server and Chromium.
@pytest.fixture(scope="module")
def demo_url():
    server = DemoServer()
    yield server.url
    server.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install -y chromium (build_scripts/test.sh does)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def new_context(browser, **kwargs):
    """A fresh context (empty cache and storage) with the network guard on."""
    context = browser.new_context(**kwargs)
    context.set_default_timeout(BOOT_TIMEOUT_MS)
    guard = NetworkGuard(context)
    return context, guard


@contextlib.contextmanager
def demo_context(**kwargs):
    """Debian's Chromium, a fresh guarded context (`new_context(**kwargs)`) and the demo server,
    as (context, url); on exit the context closes and the guard is checked."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install -y chromium (build_scripts/test.sh does)"
    server = DemoServer()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context, guard = new_context(browser, **kwargs)
            yield context, server.url
            context.close()
            guard.check()
            browser.close()
    finally:
        server.close()


def evaluate_json(page, script: str, arg=None):
    """`page.evaluate(script, arg)` with the argument and the answer sent as one JSON text each.
    Playwright serializes an array element by element: a million ids took 15-18 s each way here
    (and 6 CPU-seconds of pytest's), as one string 0.2-0.5 s.  For scripts whose argument and
    answer are JSON data (lists, not typed arrays; null, not undefined, where a value is read);
    lone surrogates survive both ways (JSON escapes them)."""
    wrapper = f"async (text) => JSON.stringify((await ({script})(JSON.parse(text))) ?? null)"
    return json.loads(page.evaluate(wrapper, json.dumps(arg)))


def wait_status(page, status: str = "ready", timeout: int = BOOT_TIMEOUT_MS) -> None:
    """Wait until the demo page reports `status` (starting, busy, ready, error)."""
    page.wait_for_selector(f"body[data-status={status}]", state="attached", timeout=timeout)


JS_LOAD = """async ([name]) => {
    const { AnyTok } = await import('/anytok.js');
    window.AnyTok = AnyTok;
    window.toks = window.toks || {};
    window.toks[name] = await AnyTok.load({ encoding: name });
    return window.toks[name].source;
}"""
