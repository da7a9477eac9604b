"""The npm package (build_scripts/build_npm.py) in a web app, as docs/browser.md's "Use it in a web app (npm)"
says: a fresh app installs the tarball offline, bundles its own code with anytok inlined
(esbuild, from npm), copies anytok's assets next to the bundle with `anytok-assets`, and the
built folder, served from 127.0.0.1, counts and encodes in headless Chromium with tiktoken's
ids and no request leaving 127.0.0.1."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from browser_support import BOOT_TIMEOUT_MS, CHROMIUM, CHROMIUM_ARGS, ROOT, new_context
from conftest import tiktoken_encoding

import build_npm  # noqa: E402
from serve_demo import DemoHandler  # noqa: E402

pytestmark = pytest.mark.xdist_group("browser")

APP_JS = """import { AnyTok } from "anytok";

const out = document.body.dataset;
try {
  const tok = await AnyTok.load({ encoding: "o200k_base" });
  const text = document.querySelector("#text").textContent;
  out.ids = JSON.stringify(await tok.encode(text));
  out.count = String(await tok.count(text));
  out.state = "done";
} catch (err) {
  out.error = String(err?.stack ?? err);
  out.state = "error";
}
"""

TEXT = "Hello, world! naïve café — 日本語のテキスト, def f(x): return x ** 2\n"


def test_web_app_from_the_tarball_counts_offline(tmp_path):
    npm = shutil.which("npm")
    assert npm, "npm is missing (build_scripts/test.sh needs it for the web assets)"
    tgz = build_npm.build(quiet=True, out=tmp_path / "npm")
    with tarfile.open(tgz) as tar:
        names = set(tar.getnames())
        package = json.load(tar.extractfile("package/package.json"))
    assert package["name"] == "anytok" and package["exports"]["."]["default"] == "./anytok.js"
    for needed in ("anytok.js", "anytok.d.ts", "worker.js", "worker_glue.py", "anytok-assets.json",
                   "pyodide/pyodide.mjs", "pyodide/pyodide.asm.wasm", "vocab/o200k_base.atok", "anytok-assets.mjs"):
        assert f"package/{needed}" in names, needed
    assert not any(n.endswith(("index.html", "demo.js")) for n in names)

    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text(json.dumps({"name": "app", "private": True, "type": "module"}))
    (app / "app.js").write_text(APP_JS)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home()),
           "npm_config_update_notifier": "false"}
    run = functools.partial(subprocess.run, cwd=app, env=env, capture_output=True, text=True, timeout=300)
    # The tarball, offline (it has no dependencies); the bundler is the esbuild web/ has from
    # npm (`npm ci`, pinned in web/package-lock.json): a fresh install of it would need npm's
    # registry metadata, which the cache does not keep.
    r = run([npm, "install", "--offline", "--no-audit", "--no-fund", str(tgz)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads((app / "package.json").read_text())["dependencies"]["anytok"].endswith(".tgz")
    esbuild = ROOT / "web" / "node_modules" / ".bin" / "esbuild"
    r = run([str(esbuild), "app.js", "--bundle", "--format=esm", "--outfile=out/app.js", "--log-level=warning"])
    assert r.returncode == 0, r.stdout + r.stderr
    r = run([str(app / "node_modules" / ".bin" / "anytok-assets"), "out"])
    assert r.returncode == 0, r.stdout + r.stderr
    out = app / "out"
    (out / "index.html").write_text(
        '<!doctype html><meta charset="utf-8"><title>app</title>'
        f'<pre id="text">{TEXT}</pre><script type="module" src="app.js"></script>', encoding="utf-8")
    # The bundle holds anytok's module code, and no copy of anytok.js is needed beside it.
    assert "AnyTokError" in (out / "app.js").read_text() and not (out / "anytok.js").exists()

    handler = functools.partial(type("Quiet", (DemoHandler,), {"quiet": True}), directory=str(out))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            ctx, guard = new_context(browser)
            page = ctx.new_page()
            page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/index.html")
            page.wait_for_selector("body[data-state]", state="attached", timeout=BOOT_TIMEOUT_MS)
            state = page.evaluate("({ ...document.body.dataset })")
            ctx.close()
            browser.close()
    finally:
        httpd.shutdown()
    guard.check()
    assert state.get("state") == "done", state.get("error")
    want = tiktoken_encoding("o200k_base").encode(TEXT)
    assert json.loads(state["ids"]) == want and int(state["count"]) == len(want)
    assert any("/pyodide/pyodide.asm.wasm" in u for u in guard.requests)
