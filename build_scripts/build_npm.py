"""Build the npm package of anytok's browser side: web/dist-npm/anytok-<version>.tgz (gitignored).

    python build_scripts/build_npm.py [--quiet]

The package is web/dist/ (see build_web.py) without the demo: the ES module `anytok.js` with its
types, the worker and its Python glue, the slim wheel, the vocabularies, the asset manifest and
Pyodide's core files (its own copy, so the package has no dependencies and a web app serves
one folder).  Every asset sits next to `anytok.js`, which finds them relative to its own
`import.meta.url`: served as it is (an import map, a dev server over node_modules) it needs
nothing more.  A bundler that inlines `anytok.js` into the app's bundle moves
`import.meta.url` to the bundle, so the assets go next to the bundle:

    npx anytok-assets OUTDIR      # copies the package's assets into OUTDIR (the bundle's folder)

(or anywhere, with `AnyTok.load({ baseURL })`).  tests/test_npm_package.py makes a web app with
esbuild from that tarball, offline, and counts tokens in it.

In Node (>= 20) the same package runs worker.js in a `worker_threads` Worker (node_worker.mjs)
and reads every file from the package folder; Deno and Bun run worker.js in their own Workers.
tests/test_npm_node.py installs the tarball offline and checks ids, decode, `load({ data })` and
a constrain mask under Node (and Deno/Bun when their binaries are named: docs/browser.md).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
import build_web  # noqa: E402

ROOT = build_web.ROOT
OUT = build_web.WEB / "dist-npm"
# web/dist/ files that belong to the demo page, not to the library.
DEMO_ONLY = {"index.html", "demo.js", "demo.css", "segments.js", "visible.js", "train_demo.js", "constrain_demo.js", "chat_demo.js",
             "compare_demo.js", "bench"}
# Not packed, to keep the tarball small: the .br streams serve_demo.py sends (a server compresses
# on its own, or runs build_web.py: docs/browser-serving.md), Pyodide's stock standard
# library (python_stdlib.zip, only for `stdlibURL: null`; the package has the compiled one), and
# the Pyodide files anytok never reads: its lock file (the manifest gives Pyodide its contents),
# its UMD loader (anytok imports pyodide.mjs) and its type declarations.
PYODIDE_UNUSED = {"python_stdlib.zip", "pyodide-lock.json", "pyodide.js", "pyodide.d.ts", "ffi.d.ts"}


def _left_out(rel: str) -> bool:
    folder, _, name = rel.rpartition("/")
    return rel.endswith(".br") or (folder == "pyodide" and name in PYODIDE_UNUSED)


COPY_ASSETS = """#!/usr/bin/env node
// anytok-assets OUTDIR: copy anytok's browser assets (worker, Python glue, wheel, vocabularies,
// Pyodide) into OUTDIR, the folder of a bundle that has anytok.js inlined (anytok.js looks for
// them next to itself, that is next to the bundle).  Written by build_scripts/build_npm.py.
import { cpSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out || process.argv.length > 3) {
  console.error("usage: anytok-assets OUTDIR");
  process.exit(2);
}
const skip = new Set(["package.json", "README.md", "anytok-assets.mjs", "anytok.js", "anytok.d.ts"]);
mkdirSync(out, { recursive: true });
for (const name of readdirSync(here)) {
  if (!skip.has(name)) cpSync(join(here, name), join(out, name), { recursive: true });
}
console.log(`anytok-assets: copied to ${out}`);
"""

README = """# anytok (browser)

Exact tiktoken-compatible token ids (and Hugging Face tokenizer.json, SentencePiece, tekken)
computed by anytok, pure Python, under Pyodide in a Web Worker.  Offline: everything it loads is
in this package.

```js
import { AnyTok } from "anytok";
const tok = await AnyTok.load({ encoding: "o200k_base" });
await tok.count("hello world");   // 2
```

In Node (>= 20) the same import works: Python runs in a `worker_threads` Worker and every file
is read from this package's folder (no network, no cache; `AnyTok.terminate()` ends it at once).
Deno and Bun run it too (end their scripts with `AnyTok.terminate()`).

With a bundler (esbuild, Vite, webpack), copy the assets next to the bundle once per build:
`npx anytok-assets OUTDIR` (or serve them anywhere and pass `AnyTok.load({ baseURL })`).
Types: `anytok.d.ts`.  Source, docs and the Python package: the anytok repository's README.
A first visit downloads ~5.4 MB when the server sends brotli, ~7 MB with gzip: see the
repository's docs/browser-serving.md for what to send.  (`stdlibURL: null`, Pyodide's stock
standard library, is not in this package.)
"""


def build(quiet: bool = False, out: Path | None = None) -> Path:
    """Packs the tarball into `out` (default web/dist-npm/), staged in its package/ folder; tests
    give folders of their own, so that two test workers never pack over each other."""
    log = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    # web/dist first: on a fresh checkout that is minutes of work (npm ci, Pyodide's standard
    # library compiled to .pyc, brotli), so say each step as build_web does.
    log("build_npm: bringing web/dist up to date (build_web.py; minutes on a fresh checkout)")
    dist = build_web.build(quiet=quiet)
    log("build_npm: staging the package")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    out = OUT if out is None else Path(out)
    stage = out / "package"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    files = []
    for path in sorted(dist.iterdir()):
        if path.name in DEMO_ONLY or path.name.startswith("bench"):  # benchmark pages (bench*/)
            continue
        if path.is_dir():
            shutil.copytree(path, stage / path.name,
                            ignore=lambda folder, names: [n for n in names if _left_out(f"{Path(folder).name}/{n}")])
        else:
            shutil.copy2(path, stage / path.name)
        files.append(path.name)
    (stage / "anytok-assets.mjs").write_text(COPY_ASSETS)
    (stage / "README.md").write_text(README)
    package = {
        "name": "anytok",
        "version": version,
        "description": "Exact tiktoken-compatible tokenization in the browser and Node: anytok (pure Python) under Pyodide in a worker.",
        "license": "MIT",
        "type": "module",
        "main": "./anytok.js",
        "types": "./anytok.d.ts",
        "exports": {
            ".": {"types": "./anytok.d.ts", "default": "./anytok.js"},
            "./package.json": "./package.json",
        },
        "bin": {"anytok-assets": "./anytok-assets.mjs"},
        "files": sorted(files + ["anytok-assets.mjs"]),
        "engines": {"node": ">=20"},
        "sideEffects": False,
    }
    (stage / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    for old in out.glob("anytok-*.tgz"):
        old.unlink()
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("build_npm: npm is not installed")
    log("build_npm: npm pack")
    subprocess.run([npm, "pack", "--silent", "--pack-destination", str(out)], cwd=stage, check=True,
                   stdout=subprocess.DEVNULL)
    tgz = out / f"anytok-{version}.tgz"
    if not tgz.exists():
        raise SystemExit(f"build_npm: npm pack did not write {tgz}")
    shown = tgz.relative_to(ROOT) if tgz.is_relative_to(ROOT) else tgz
    log(f"build_npm: {shown} ({tgz.stat().st_size / 1e6:.1f} MB)")
    return tgz


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    build(quiet=args.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
