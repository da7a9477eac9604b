"""Browser benchmark: anytok (Pyodide, in its Web Worker) against gpt-tokenizer and js-tiktoken.

    python build_scripts/bench/bench_browser.py [--runs 3] [--corpora DIR]

All in one headless Chromium page (Debian's /usr/bin/chromium), o200k_base, on the four corpora
of ../shared/corpora.  Each tokenizer encodes, counts and decodes each corpus once ("first": the
first call on that corpus, after a warm-up on other text; for anytok this includes sending the
input to the worker and the result back), then `--runs` more times (the median of those).  Before
every call the caches of merged pieces are emptied, untimed: anytok's in the worker (a hook only
this script uses) and gpt-tokenizer's (`clearMergeCache`), so no call is helped by an earlier
one (js-tiktoken keeps none); and the page collects its garbage and idles for a moment
(bench_common.settle), so no call is slowed by the collection of what earlier calls left.
Every tokenizer's ids are checked against anytok's, its counts against their number and its
decoded text against the corpus.

Also the start: time from navigation to the first `count()` resolved on a bare page of the
origin that imports /anytok.js, in a fresh browser profile (first visit: everything downloaded)
and on a second visit (warm: HTTP cache, the start-up snapshot and the vocabulary from Cache
Storage), with and without the snapshot (`snapshot: false`), against a bare boot
of the stock Pyodide from npm (its own files, served by a server of their own: navigation to
`loadPyodide()` resolved and `1 + 1` run), first and second visit, measured in the same run and
alternated with anytok's; then where anytok's warm start went.  `--start-only` measures only that;
`--only decode` (or any of encode, count, decode, comma-separated) measures only those
operations and not the start (decode alone: the ids are anytok's encode of each corpus, untimed).
`--formats` then runs bench_browser_formats.py (tokenizer.json models against
`@huggingface/tokenizers`).

Prints a markdown table with the date, the machine and the exact command.  A script, not a test:
the numbers depend on the machine and its load.  Nothing is fetched from outside 127.0.0.1.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
import build_web  # noqa: E402
from serve_demo import make_server  # noqa: E402

import bench_common  # noqa: E402

ROOT = build_web.ROOT
CORPORA = {
    "English": "en_emma.txt",
    "Python code": "code_cpython_stdlib.txt",
    "Chinese": "zh_peoplesdaily_1998.txt",
    "Japanese": "ja_debian_reference.txt",
}
TOKENIZERS = ["anytok", "gpt-tokenizer", "js-tiktoken"]
OPS = ["encode", "count", "decode"]


def build_bench(corpora_dir: Path) -> None:
    """web/dist/ plus web/dist/bench/: the page, the peers bundled by esbuild, the corpora."""
    build_web.build(quiet=True)
    out = build_web.DIST / "bench"
    out.mkdir(exist_ok=True)
    shutil.copy2(build_web.WEB / "bench" / "index.html", out / "index.html")
    esbuild = build_web.NODE_MODULES / ".bin" / "esbuild"
    subprocess.run(
        [str(esbuild), "bench/peers.js", "--bundle", "--format=esm", "--minify", "--log-level=warning",
         f"--outfile={out / 'peers.js'}"],
        cwd=build_web.WEB, check=True,
    )
    (out / "corpora").mkdir(exist_ok=True)
    for name in CORPORA.values():
        shutil.copy2(corpora_dir / name, out / "corpora" / name)


def start_server() -> str:
    httpd = make_server(0, quiet=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/"


BARE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>bare Pyodide</title></head>
<body><script type="module">
window.firstCount = (async () => {
  const { loadPyodide } = await import("./pyodide.mjs");
  const py = await loadPyodide();
  py.runPython("1 + 1");
  return { ms: performance.now() };
})();
</script></body></html>
"""


def start_bare_server(folder: Path) -> str:
    """The stock Pyodide from npm, as its package ships it, and a page that boots it, served from
    127.0.0.1 by a server of their own (with serve_demo's headers)."""
    import functools

    import serve_demo

    folder.mkdir(parents=True, exist_ok=True)
    for name in build_web.PYODIDE_FILES:
        shutil.copy2(build_web.NODE_MODULES / "pyodide" / name, folder / name)
    (folder / "index.html").write_text(BARE_PAGE)
    handler = functools.partial(type("Bare", (serve_demo.DemoHandler,), {"quiet": True}), directory=str(folder))
    httpd = serve_demo.http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/index.html"


START_PARTS = [
    ("importedMs", "page: navigation to anytok.js imported"),
    ("loader", "worker: Pyodide's loader imported"),
    ("wasmFetch", "worker: pyodide.asm.wasm fetched (overlaps the boot)"),
    ("stdlibFetch", "worker: compiled stdlib fetched (overlaps the boot)"),
    ("snapshotRead", "worker: snapshot read from Cache Storage (overlaps the loader's import and the wasm's fetch)"),
    ("snapshotCheck", "worker: snapshot's checksum checked, its zero pages put back"),
    ("pyodideMs", "worker: Pyodide started (snapshot read and checked, wasm compiled, heap restored)"),
    ("anytokMs", "worker: anytok's files installed (after a restore: on demand, later), glue imported"),
    ("vocabMs", "worker: vocabulary from Cache Storage, parsed"),
    ("countMs", 'first count ("hello world")'),
]


def measure_start(browser, url: str, bare_url: str, visits: int, watch) -> dict:
    """Navigation to the first count, first and second visit of a fresh profile each, anytok's
    alternated with the bare Pyodide's; lists of ms by kind, and anytok's warm breakdown."""
    out: dict[str, list] = {"cold": [], "warm": [], "bare cold": [], "bare warm": [], "plain cold": [], "plain warm": [],
                            "parts": [], "compiled": [], "snapshots": []}
    for i in range(visits):
        order = [("", url + "bench/index.html?first-count"), ("bare ", bare_url),
                 ("plain ", url + "bench/index.html?first-count&no-snapshot")]
        for prefix, page_url in order if i % 2 == 0 else order[::-1]:
            context = browser.new_context()
            for kind in ("cold", "warm"):
                page = watch(context.new_page())
                page.goto(page_url)
                result = page.evaluate("window.firstCount")
                out[prefix + kind].append(result["ms"])
                if not prefix and kind == "warm":
                    out["parts"].append(result)
                    out["compiled"].append(result["compiled"])
                    out["snapshots"].append(result["snapshot"])
                page.close()
            context.close()
    return out


def print_start(start: dict, visits: int) -> None:
    def spread(values: list[float]) -> str:
        values = [v for v in values if v is not None]
        if not values:
            return "n/a"
        return f"{statistics.median(values):.0f} ({min(values):.0f}–{max(values):.0f})"

    med = {k: statistics.median(start[k]) for k in ("cold", "warm", "bare cold", "bare warm")}
    print(f"Start: time from navigation to the first count resolved, ms, median (range) of {visits} fresh "
          f"profiles; the bare boot of the stock Pyodide (npm, its own server) measured in the same run, "
          f"alternated; anytok ran compiled Python: {all(all(c.values()) for c in start['compiled'])}; start-up snapshot "
          f"on its second visits: {', '.join(sorted(set(start['snapshots'])))}.\n")
    print("| start | anytok, ms | bare Pyodide boot, ms | anytok ÷ bare boot |")
    print("|---|---|---|---|")
    print(f"| first visit (empty profile: everything downloaded) | {spread(start['cold'])} | {spread(start['bare cold'])} "
          f"| {med['cold'] / med['bare cold']:.2f}× |")
    print(f"| second visit (HTTP cache; snapshot and vocabulary from Cache Storage) | {spread(start['warm'])} | {spread(start['bare warm'])} "
          f"| {med['warm'] / med['bare warm']:.2f}× |")
    print(f"| first visit, `snapshot: false` | {spread(start['plain cold'])} | | {statistics.median(start['plain cold']) / med['bare cold']:.2f}× |")
    print(f"| second visit, `snapshot: false` (compiled Python only) | {spread(start['plain warm'])} | "
          f"| {statistics.median(start['plain warm']) / med['bare warm']:.2f}× |")
    print()
    print("Where anytok's second visit went, ms, median (range):\n")
    print("| part | ms |")
    print("|---|---|")
    for key, label in START_PARTS:
        print(f"| {label} | {spread([p.get(key) for p in start['parts']])} |")
    print(f"| whole: navigation to the first count | {spread(start['warm'])} |")
    print()


def machine() -> str:
    cpu = bench_common.cpu_model()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, load average {load} at the start"


def command_line(argv: list[str] | None) -> str:
    return "python " + " ".join(shlex.quote(a) for a in ["build_scripts/bench/bench_browser.py", *(argv if argv is not None else sys.argv[1:])])


def print_header(version: str, runtime: dict | None, host: str, argv: list[str] | None) -> None:
    command = command_line(argv)
    python = f" (Python {runtime['python']}), anytok {runtime['anytok']}" if runtime else ""
    print(f"Browser benchmark, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC: headless Chromium {version}, "
          f"Pyodide {build_web.pinned_pyodide_version()}{python}, o200k_base.")
    print(f"Machine: {host}.  Command: `{command}`.\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="timed runs after the first (default 3)")
    ap.add_argument("--visits", type=int, default=3, help="cold/warm start-up measurements (default 3)")
    ap.add_argument("--corpora", type=Path, default=bench_common.CORPORA_DIR)
    ap.add_argument("--start-only", action="store_true", help="measure only the start (navigation to the first count)")
    ap.add_argument("--only", default=None, metavar="OPS",
                    help="measure only these operations (comma-separated: encode,count,decode), and not the start")
    ap.add_argument("--formats", action="store_true",
                    help="then run bench_browser_formats.py: tokenizer.json models against @huggingface/tokenizers")
    args = ap.parse_args(argv)
    ops = OPS
    if args.only is not None:
        ops = [op for op in OPS if op in args.only.split(",")]
        unknown = set(args.only.split(",")) - set(OPS)
        if unknown or not ops:
            ap.error(f"--only takes operations among {', '.join(OPS)}, not {args.only!r}")
        if args.start_only:
            ap.error("--only and --start-only exclude each other")

    from playwright.sync_api import sync_playwright

    host = machine()
    build_bench(args.corpora)
    url = start_server()
    bare_url = start_bare_server(build_web.DIST / "bench" / "bare-pyodide")
    outside: list[str] = []
    anytok_dropped: list[int] = []

    def watch(page):
        page.on("request", lambda r: None if r.url.startswith(("http://127.0.0.1", "data:", "blob:")) else outside.append(r.url))
        return page

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=bench_common.CHROMIUM, args=bench_common.CHROMIUM_ARGS)

        start = measure_start(browser, url, bare_url, args.visits, watch) if args.only is None else None
        version = browser.version
        if args.start_only:
            browser.close()
            if outside:
                raise SystemExit(f"requests left 127.0.0.1: {outside}")
            print_header(version, None, host, argv)
            print_start(start, args.visits)
            return 0

        # Throughput, all in one page, in a browser of its own whose page can collect its garbage
        # on demand (bench_common.settle).
        browser.close()
        browser = p.chromium.launch(executable_path=bench_common.CHROMIUM,
                                    args=[*bench_common.CHROMIUM_ARGS, *bench_common.GC_ARGS])
        page = watch(browser.new_page())
        page.set_default_timeout(600_000)
        page.goto(url + "bench/index.html")
        page.wait_for_function("window.bench !== undefined")
        runtime = page.evaluate("bench.setup()")
        # Warm up every tokenizer (JIT, worker) on text that shares little with the corpora: text
        # with non-ASCII characters and ASCII text (anytok splits ASCII text with a regex of its
        # own, and Python's `re` has code of its own for 1-byte strings, which Chromium compiles
        # with its optimizing tier only once it has run a while: without the ASCII warm-up the
        # first call on English paid ~20 ms of that).
        page.evaluate("""async () => {
            const texts = ["Warm-up 0123: the quick brown fox; 日本語 中文 Ελληνικά; def f(x): return x\\n".repeat(400),
                           "Warm-up 4567: a lazy dog jumps; def g(y):\\n    return [y, 'z'] # ok\\n".repeat(400)];
            for (const text of texts) {
                for (const name of ["anytok", "gpt-tokenizer", "js-tiktoken"]) {
                    const ids = (await bench.run(name, "encode", text), window.lastResult);
                    await bench.run(name, "count", text);
                    await bench.run(name, "decode", ids);
                }
            }
        }""")
        results: dict[str, dict] = {}
        for label, file in CORPORA.items():
            size = (args.corpora / file).stat().st_size
            page.evaluate("async ([url]) => { window.text = await bench.corpus(url); }", [f"/bench/corpora/{file}"])
            results[label] = {"bytes": size, "checks": []}
            if "encode" not in ops:  # the ids to decode: anytok's, untimed
                page.evaluate("async () => { window.ids = await bench.tok.encode(window.text); }")
            for op in ops:
                for name in TOKENIZERS:
                    runs = []
                    for _ in range(1 + args.runs):
                        bench_common.settle(page)
                        dropped = page.evaluate("([name]) => bench.reset(name)", [name])
                        if name == "anytok" and op != "decode" and runs:
                            anytok_dropped.append(dropped)
                        runs.append(page.evaluate(
                            "async ([name, op]) => bench.run(name, op, op === 'decode' ? window.ids : window.text)", [name, op]))
                    if op == "encode":
                        if name == TOKENIZERS[0]:
                            page.evaluate("window.ids = window.lastResult")
                        ok = page.evaluate("window.lastResult.length === window.ids.length && window.lastResult.every((id, i) => id === window.ids[i])")
                    elif op == "count":
                        ok = page.evaluate("window.lastResult === window.ids.length")
                    else:
                        ok = page.evaluate("window.lastResult === window.text")
                    results[label]["checks"].append(ok)
                    results[label][name, op] = {
                        "first": size / 2**20 / (runs[0]["ms"] / 1000),
                        "median": size / 2**20 / (statistics.median(r["ms"] for r in runs[1:]) / 1000) if len(runs) > 1 else None,
                    }
            results[label]["identical"] = all(results[label]["checks"])
        browser.close()

    if outside:
        raise SystemExit(f"requests left 127.0.0.1: {outside}")

    print_header(version, runtime, host, argv)
    print(f"MiB/s of text, first call (median of the next {args.runs}); every call made without the caches of "
          f"merged pieces (anytok's and gpt-tokenizer's emptied before each; anytok's held "
          f"{min(anytok_dropped, default=0)}–{max(anytok_dropped, default=0)} pieces after a call); count: anytok's "
          f"and gpt-tokenizer's own, js-tiktoken's the length of encode; \"same\": ids equal to anytok's, "
          f"counts to their number, decoded text to the corpus, for every tokenizer.\n")
    for op in ops:
        print(f"{op.capitalize()}:\n")
        print("| corpus | MB | anytok | gpt-tokenizer | js-tiktoken | anytok ÷ js-tiktoken | anytok ÷ gpt-tokenizer | same |")
        print("|---|---|---|---|---|---|---|---|")
        for label, r in results.items():
            cell = lambda n: f"{r[n, op]['first']:.2f} ({r[n, op]['median']:.2f})" if r[n, op]["median"] else f"{r[n, op]['first']:.2f}"  # noqa: E731
            ratio = lambda a, b: (f"{r[a, op]['first'] / r[b, op]['first']:.2f}× ({r[a, op]['median'] / r[b, op]['median']:.2f}×)"  # noqa: E731
                                  if r[a, op]["median"] else f"{r[a, op]['first'] / r[b, op]['first']:.2f}×")
            print(f"| {label} | {r['bytes'] / 1e6:.2f} | {cell('anytok')} | {cell('gpt-tokenizer')} | {cell('js-tiktoken')} "
                  f"| {ratio('anytok', 'js-tiktoken')} | {ratio('anytok', 'gpt-tokenizer')} | {'yes' if r['identical'] else 'NO'} |")
        print()

    if start is not None:
        print_start(start, args.visits)
    status = 0 if all(r["identical"] for r in results.values()) else 1
    if args.formats:
        import bench_browser_formats

        print()
        status |= bench_browser_formats.main(["--corpora", str(args.corpora)], command=command_line(argv))
    return status


if __name__ == "__main__":
    sys.exit(main())
