"""Browser benchmark for tokenizer.json models: anytok against `@huggingface/tokenizers`.

    python build_scripts/bench/bench_browser_formats.py [--runs 3] [--visits 3] [--models ...]

`@huggingface/tokenizers` (Tokenizers.js, the library Transformers.js uses; npm, pinned in
web/package.json) and anytok (`AnyTok.load({ url })` through /anytok.js, Pyodide in its Web
Worker), both in headless Chromium (Debian's /usr/bin/chromium) on a page served from
127.0.0.1; every request for another host is aborted, and the script fails if there was one.
The page imports the ES module the npm package ships for browsers as it is (it has no imports
of its own, so nothing needs bundling).

Three tables, in markdown, with the date, the machine, the versions and the exact command:

* Time to first count: navigation of a bare page to the first count of a short text resolved,
  which includes loading the library (for anytok: booting Pyodide, installing anytok),
  fetching and parsing tokenizer.json, and the count.  First visit of a fresh browser profile
  and second visit of the same profile (HTTP cache), median of `--visits` profiles, the two
  libraries alternated.
* Encode MiB/s on the four corpora (bench_common.CORPORA), median of `--runs` calls after an
  untimed warm-up call, each library's cache of merged pieces emptied (untimed) before every
  call: anytok's in the worker, Tokenizers.js's BPE cache (`model.clear_cache()`).  anytok's time
  includes sending the text to its worker and the ids back.
* Ids against native Hugging Face `tokenizers` (the venv's, `add_special_tokens=False`) on
  each whole corpus and on every code point U+0000..U+10FFFF but the surrogates, each put in
  context as "a" + ch + "b " and cut into texts of `--chunk` code points.  A text whose ids
  differ is halved until the code points that differ on their own are found; a text that differs
  while both its halves agree is counted as a context difference.  Models: Llama 3 and Qwen 3
  (byte-level BPE), Llama 2 and Gemma 3 (SentencePiece-style BPE with byte fallback, as their
  tokenizer.json files on npm are: no `Precompiled` normalizer in either) and a tokenizer.json
  that `tokenizers` builds here from sentencepiece's own test model, test_model.model (Unigram;
  SentencePiece's `Precompiled` normalizer with the model's charsmap, rule "nfkc"; Metaspace), as
  Hugging Face's converters write SentencePiece models.  A corpus on which a library raises is
  compared again cut into blocks of lines (about 4,096 characters each).

With `--offsets`, only this: anytok's `tok.encode(text, { offsets: true })` (ids and UTF-16
offsets) against `tok.encode(text)` on the four corpora (the first `--offsets-chars` code points
of each, one call), for o200k_base and the Llama 3 and MiniLM tokenizer.json files
(`--offsets-models`): median of `--runs` calls of each, alternated, after an untimed call of each
that checks both give the same ids and one offset per id; the ratio is the offsets' cost.

    python build_scripts/bench/bench_browser_formats.py --offsets [--runs 3] [--offsets-chars 200000]

A script, not a test: timings depend on the machine and its load.  Models come from
fetch_models.py's cache (.cache/models).
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
import bench_common  # noqa: E402
import build_web  # noqa: E402
import fetch_models  # noqa: E402

ROOT = build_web.ROOT
OUT = build_web.DIST / "bench-formats"
HF_JS_PACKAGE = build_web.NODE_MODULES / "@huggingface" / "tokenizers"

# name: (label, file in fetch_models' cache, or None for the one built here)
MODELS = {
    "llama3": ("Llama 3", "llama3.tokenizer.json"),
    "qwen3": ("Qwen 3", "qwen3.tokenizer.json"),
    "llama2": ("Llama 2", "llama2.tokenizer.json"),
    "gemma3": ("Gemma 3", "gemma3.tokenizer.json"),
    "sp-unigram": ("test_model.model as tokenizer.json (Unigram, Precompiled)", None),
}
SPEED_MODELS = ["llama3", "qwen3"]
# --offsets: name -> (label, AnyTok.load's options; "url" is a file of fetch_models' cache)
OFFSETS_MODELS = {
    "o200k": ("o200k_base", {"encoding": "o200k_base"}),
    "llama3": ("Llama 3 (tokenizer.json)", {"url": "llama3.tokenizer.json"}),
    "minilm": ("MiniLM (tokenizer.json: BERT normalizer, WordPiece)", {"url": "minilm.tokenizer.json"}),
}
LIBS = ["anytok", "tokenizers.js"]
START_TEXT = "Hello, world! How many tokens is this?"

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>anytok and Tokenizers.js</title></head>
<body><p>Driven by build_scripts/bench/bench_browser_formats.py.</p>
<script type="module">
const params = new URLSearchParams(location.search);
const modelURL = (name) => new URL(`models/${name}.tokenizer.json`, location.href).href;

// 32-bit FNV-1a over the ids (the same function as the script's fnv()).
function fnv(ids) {
  let h = 0x811c9dc5;
  for (const id of ids) h = Math.imul(h ^ id, 0x01000193) >>> 0;
  return h;
}

// The code points below `end` (0x110000: all) but the surrogates, in order.
function allCodePoints(end) {
  const out = [];
  for (let cp = 0; cp < end; cp++) if (cp < 0xd800 || cp > 0xdfff) out.push(cp);
  return out;
}

// One code point in context: the text the script builds the same way (text_of()).
function textOf(cps) {
  const parts = [];
  for (const cp of cps) parts.push("a", String.fromCodePoint(cp), "b ");
  return parts.join("");
}

// A library with one model loaded; `parts`: where its load went, ms.
async function loadLib(lib, model) {
  const t0 = performance.now();
  if (lib === "anytok") {
    const { AnyTok } = await import("../anytok.js");
    const t1 = performance.now();
    const tok = await AnyTok.load({ url: modelURL(model) });
    const { pyodideMs, anytokMs } = tok.runtimeInfo;
    return {
      count: (text) => tok.count(text),
      encode: (text) => tok.encode(text),
      reset: () => tok._clearPieceCache(),
      info: () => tok.runtimeInfo,
      parts: { "module imported": t1 - t0, "worker: Pyodide booted": pyodideMs,
               "worker: anytok installed and imported": anytokMs,
               "worker: tokenizer.json fetched and converted": tok.loadMs },
    };
  }
  const { Tokenizer } = await import("./tokenizers.mjs");
  const t1 = performance.now();
  const json = await (await fetch(modelURL(model))).json();
  const t2 = performance.now();
  const tok = new Tokenizer(json, {});
  const t3 = performance.now();
  return {
    count: async (text) => tok.encode(text, { add_special_tokens: false }).ids.length,
    encode: async (text) => tok.encode(text, { add_special_tokens: false }).ids,
    reset: async () => tok.model.clear_cache?.(),
    info: () => ({}),
    parts: { "module imported": t1 - t0, "tokenizer.json fetched and parsed (JSON.parse)": t2 - t1,
             "new Tokenizer(json)": t3 - t2 },
  };
}

if (params.has("first")) {
  // Time to first count: the page's clock starts at navigation.
  window.firstCount = (async () => {
    const lib = await loadLib(params.get("first"), params.get("model"));
    const t = performance.now();
    const count = await lib.count(params.get("text"));
    return { ms: performance.now(), count, parts: { ...lib.parts, "first count": performance.now() - t } };
  })();
} else {
  window.bench = {
    libs: {},
    async setup(model) {
      for (const name of ["anytok", "tokenizers.js"]) this.libs[name] = await loadLib(name, model);
      return this.libs.anytok.info();
    },
    async corpus(url) {
      window.text = await (await fetch(url)).text();
      return window.text.length;
    },
    // One encode of window.text, the caches of merged pieces emptied first (untimed).
    async time(name) {
      const lib = this.libs[name];
      await lib.reset();
      const start = performance.now();
      const ids = await lib.encode(window.text);
      const ms = performance.now() - start;
      window.lastIds = ids;
      return { ms, n: ids.length };
    },
    // --offsets: one anytok tokenizer (`spec`: AnyTok.load's options) timed with and without
    // offsets on window.text, cut to its first `chars` code points (0: all of it).
    async setupOffsets(spec) {
      const { AnyTok } = await import("../anytok.js");
      if (spec.url) spec = { ...spec, url: new URL(spec.url, location.href).href };
      this.offsetsTok = await AnyTok.load(spec);
      return this.offsetsTok.runtimeInfo;
    },
    cut(chars) {
      if (chars > 0) window.text = Array.from(window.text).slice(0, chars).join("");
      return window.text.length;
    },
    async timeOffsets(withOffsets) {
      const tok = this.offsetsTok;
      const start = performance.now();
      const got = withOffsets ? await tok.encode(window.text, { offsets: true }) : await tok.encode(window.text);
      const ms = performance.now() - start;
      const ids = withOffsets ? got.ids : got;
      window.lastOffsets = withOffsets ? got : null;
      return { ms, n: ids.length, fnv: fnv(ids), offsets: withOffsets ? got.offsets.length : -1 };
    },
    // The ids of each text (or an error's message).
    async idsOf(name, texts) {
      const out = [];
      for (const text of texts) {
        try {
          out.push(Array.from(await this.libs[name].encode(text)));
        } catch (e) {
          out.push(String(e).slice(0, 200));
        }
      }
      return out;
    },
    async ids(name) {
      try {
        return Array.from(await this.libs[name].encode(window.text));
      } catch (e) {
        return String(e).slice(0, 200);
      }
    },
    // [length, fnv] of the ids of textOf(group) for each group (a list of code points), or of
    // every `chunk` code points below `end` when groups is null; [-1, message] on an error.
    async hashes(name, groups, chunk, end) {
      if (groups === null) {
        const cps = allCodePoints(end);
        groups = [];
        for (let i = 0; i < cps.length; i += chunk) groups.push(cps.slice(i, i + chunk));
      }
      const lib = this.libs[name];
      const out = [];
      for (const group of groups) {
        try {
          const ids = await lib.encode(textOf(group));
          out.push([ids.length, fnv(ids)]);
        } catch (e) {
          out.push([-1, String(e).slice(0, 200)]);
        }
      }
      return out;
    },
  };
}
</script></body></html>
"""


def log(message: str) -> None:
    print(f"[{datetime.datetime.now(datetime.timezone.utc):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def fnv(ids) -> int:
    h = 0x811C9DC5
    for i in ids:
        h = ((h ^ i) * 0x01000193) & 0xFFFFFFFF
    return h


def text_of(cps) -> str:
    return "".join("a" + chr(cp) + "b " for cp in cps)


def all_code_points(end: int = 0x110000) -> list[int]:
    return [cp for cp in range(end) if not 0xD800 <= cp <= 0xDFFF]


def sp_unigram_json() -> bytes:
    """A tokenizer.json for sentencepiece's test_model.model (fetch_sentencepiece_models.py), as
    Hugging Face's converters write a SentencePiece Unigram model: the Precompiled normalizer
    with the model's charsmap, then runs of spaces made one; Metaspace; Unigram scores."""
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import Unigram

    from anytok.sentencepiece.model_proto import parse_model_proto

    proto = parse_model_proto((fetch_models.models_dir() / "test_model.model").read_bytes())
    tok = Tokenizer(Unigram(list(zip(proto.pieces, proto.scores)), unk_id=0, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap),
                                           normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    return tok.to_str().encode()


def build(models: list[str], corpora_dir: Path) -> None:
    """web/dist/ plus web/dist/bench-formats/: the page, Tokenizers.js's browser module, the
    models and the corpora."""
    build_web.build(quiet=True)
    OUT.mkdir(exist_ok=True)
    (OUT / "index.html").write_text(PAGE)
    exports = json.loads((HF_JS_PACKAGE / "package.json").read_text())["exports"]["."]
    shutil.copy2(HF_JS_PACKAGE / exports["browser"]["import"], OUT / "tokenizers.mjs")
    (OUT / "models").mkdir(exist_ok=True)
    for name in models:
        target = OUT / "models" / f"{name}.tokenizer.json"
        if MODELS[name][1] is None:
            target.write_bytes(sp_unigram_json())
        else:
            shutil.copy2(fetch_models.models_dir() / MODELS[name][1], target)
    (OUT / "corpora").mkdir(exist_ok=True)
    for file in bench_common.CORPORA.values():
        shutil.copy2(corpora_dir / file, OUT / "corpora" / file)


def start_server() -> str:
    from serve_demo import make_server

    httpd = make_server(0, quiet=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/bench-formats/index.html"


def hf_native(name: str):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(OUT / "models" / f"{name}.tokenizer.json"))


def first_counts(browser, guard, url: str, visits: int, models: list[str]) -> dict:
    """{(model, lib, "first"|"second"): [ms, ...]} and the counts seen."""
    from urllib.parse import urlencode

    out: dict = {}
    counts: dict = {}
    parts: dict = {}
    for i in range(visits):
        for model in models:
            for lib in LIBS if i % 2 == 0 else LIBS[::-1]:
                context = browser.new_context()
                context.route("**/*", guard)
                for visit in ("first", "second"):
                    page = context.new_page()
                    page.set_default_timeout(300_000)
                    page.goto(url + "?" + urlencode({"first": lib, "model": model, "text": START_TEXT}))
                    result = page.evaluate("window.firstCount")
                    out.setdefault((model, lib, visit), []).append(result["ms"])
                    for part, ms in result["parts"].items():
                        parts.setdefault((model, lib, visit), {}).setdefault(part, []).append(ms)
                    counts.setdefault((model, lib), set()).add(result["count"])
                    page.close()
                context.close()
    return {"ms": out, "counts": counts, "parts": parts}


def open_model(browser, guard, url: str, model: str):
    page = browser.new_context().new_page()
    page.context.route("**/*", guard)
    page.set_default_timeout(1_800_000)
    page.goto(url)
    page.wait_for_function("window.bench !== undefined")
    runtime = page.evaluate("([m]) => bench.setup(m)", [model])
    return page, runtime


def speeds(page, corpora_dir: Path, runs: int) -> dict:
    """{(corpus, lib): median MiB/s}, each library's ids checked against the other's."""
    out = {}
    for key, file in bench_common.CORPORA.items():
        size = (corpora_dir / file).stat().st_size
        page.evaluate("([u]) => bench.corpus(u)", [f"corpora/{file}"])
        for lib in LIBS:
            page.evaluate("([n]) => bench.time(n)", [lib])  # warm-up, untimed
            ms = [page.evaluate("([n]) => bench.time(n)", [lib])["ms"] for _ in range(runs)]
            out[key, lib] = size / 2**20 / (statistics.median(ms) / 1000)
    return out


def blocks_of(text: str, size: int = 4096) -> list[str]:
    """text cut after a line end once a block has `size` characters or more."""
    blocks, current, n = [], [], 0
    for line in text.splitlines(keepends=True):
        current.append(line)
        n += len(line)
        if n >= size:
            blocks.append("".join(current))
            current, n = [], 0
    if current:
        blocks.append("".join(current))
    return blocks


def corpus_parity(page, ref, corpora_dir: Path) -> dict:
    """{(corpus, lib): "identical" or how the ids differ from native tokenizers'}."""
    out = {}
    for key, file in bench_common.CORPORA.items():
        text = (corpora_dir / file).read_text(encoding="utf-8")
        want = ref.encode(text, add_special_tokens=False).ids
        page.evaluate("([u]) => bench.corpus(u)", [f"corpora/{file}"])
        for lib in LIBS:
            got = page.evaluate("([n]) => bench.ids(n)", [lib])
            if isinstance(got, str):
                # Raised on the whole text: compare it cut in blocks of lines instead.
                blocks = blocks_of(text)
                got_blocks = page.evaluate("([n, b]) => bench.idsOf(n, b)", [lib, blocks])
                want_blocks = [e.ids for e in ref.encode_batch(blocks, add_special_tokens=False)]
                bad = sum(1 for a, b in zip(got_blocks, want_blocks) if a != b)
                out[key, lib] = (f"raised {got.split(':')[0]} on the whole text; in {len(blocks)} blocks of lines: "
                                 + ("same" if bad == 0 else f"{bad} blocks differ"))
            elif got == want:
                out[key, lib] = "identical"
            else:
                first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                out[key, lib] = f"differ: {len(got)} ids vs {len(want)}, first at id {first}"
    return out


def code_point_parity(page, ref, lib: str, chunk: int, end: int) -> dict:
    """The code points whose text "a" + ch + "b " gets other ids from `lib` than from native
    tokenizers, found by halving the chunks that differ; and the chunks that differ only in
    context (both halves agree)."""
    cps = all_code_points(end)
    groups = [cps[i:i + chunk] for i in range(0, len(cps), chunk)]

    def want(gs):
        return [[len(e.ids), fnv(e.ids)] for e in ref.encode_batch([text_of(g) for g in gs], add_special_tokens=False)]

    got = page.evaluate("([n, c, e]) => bench.hashes(n, null, c, e)", [lib, chunk, end])
    bad = [g for g, a, b in zip(groups, got, want(groups)) if a != b]
    errors = sum(1 for a in got if a[0] == -1)
    texts_differ = len(bad)
    singles: list[int] = []
    context: list[list[int]] = []
    while bad:
        halves = [h for g in bad for h in (g[: len(g) // 2], g[len(g) // 2:])]
        got = page.evaluate("([n, gs]) => bench.hashes(n, gs, 0, 0)", [lib, halves])
        differs = [a != b for a, b in zip(got, want(halves))]
        next_bad = []
        for j, g in enumerate(bad):
            pair = [(halves[2 * j], differs[2 * j]), (halves[2 * j + 1], differs[2 * j + 1])]
            if not any(d for _, d in pair):
                context.append(g)
            for h, d in pair:
                if d and len(h) == 1:
                    singles.append(h[0])
                elif d:
                    next_bad.append(h)
        bad = next_bad
    return {"texts": len(groups), "texts_differ": texts_differ, "errors": errors,
            "singles": sorted(singles), "context": context}


def describe(cps: list[int], limit: int = 12) -> str:
    """Ranges of code points, the first `limit` of them."""
    ranges: list[list[int]] = []
    for cp in cps:
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    shown = [f"U+{a:04X}" if a == b else f"U+{a:04X}..U+{b:04X}" for a, b in ranges[:limit]]
    return ", ".join(shown) + (f", … ({len(ranges)} ranges)" if len(ranges) > limit else "")


def offsets_bench(args, command: str) -> int:
    """--offsets: anytok's `tok.encode(text, { offsets: true })` against `tok.encode(text)` in
    the page, per model and corpus; prints the table and the ratios."""
    from playwright.sync_api import sync_playwright

    models = [m.strip() for m in args.offsets_models.split(",") if m.strip()]
    for m in models:
        if m not in OFFSETS_MODELS:
            raise SystemExit(f"--offsets-models: unknown {m!r} (known: {', '.join(OFFSETS_MODELS)})")
    started = datetime.datetime.now(datetime.timezone.utc)
    host = machine()
    t0 = time.monotonic()
    build([], args.corpora)
    for m in models:
        url = OFFSETS_MODELS[m][1].get("url")
        if url:
            shutil.copy2(fetch_models.models_dir() / url, OUT / "models" / url)
    url = start_server()
    outside: list[str] = []
    guard = bench_common.guard_into(outside)
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=bench_common.CHROMIUM, args=bench_common.CHROMIUM_ARGS)
        version = browser.version
        page = browser.new_context().new_page()
        page.context.route("**/*", guard)
        page.set_default_timeout(1_800_000)
        page.goto(url)
        page.wait_for_function("window.bench !== undefined")
        runtime: dict = {}
        for m in models:
            spec = dict(OFFSETS_MODELS[m][1])
            if "url" in spec:
                spec["url"] = f"models/{spec['url']}"
            log(f"{m}: loading")
            runtime = page.evaluate("([s]) => bench.setupOffsets(s)", [spec])
            for key, file in bench_common.CORPORA.items():
                page.evaluate("([u]) => bench.corpus(u)", [f"corpora/{file}"])
                chars = page.evaluate("([n]) => bench.cut(n)", [args.offsets_chars])
                text_bytes = len((args.corpora / file).read_text(encoding="utf-8")[: args.offsets_chars or None]
                                 .encode("utf-8"))
                log(f"{m} / {key}: {chars} UTF-16 units")
                # Untimed warm-up of both (the tokenizer's caches are kept from then on: both
                # modes are timed warm), and the check: same ids, one offset per id.
                plain = page.evaluate("() => bench.timeOffsets(false)")
                witho = page.evaluate("() => bench.timeOffsets(true)")
                if (plain["n"], plain["fnv"]) != (witho["n"], witho["fnv"]) or witho["offsets"] != witho["n"]:
                    raise SystemExit(f"{m} / {key}: encode with offsets gave other ids than encode ({plain} / {witho})")
                times: dict = {False: [], True: []}
                for r in range(args.runs):
                    for mode in ((False, True) if r % 2 == 0 else (True, False)):
                        times[mode].append(page.evaluate("([o]) => bench.timeOffsets(o)", [mode])["ms"])
                rows.append((m, key, text_bytes, statistics.median(times[False]), statistics.median(times[True])))
                log(f"{m} / {key}: ids {rows[-1][3]:.0f} ms, offsets {rows[-1][4]:.0f} ms")
        page.context.close()
        browser.close()
    if outside:
        raise SystemExit(f"requests outside 127.0.0.1: {outside[:5]}")
    print(f"Offsets in the page, {started:%Y-%m-%d %H:%M} UTC ({time.monotonic() - t0:.0f} s): headless Chromium "
          f"{version}; anytok {runtime.get('anytok', '?')} in Pyodide {build_web.pinned_pyodide_version()} "
          f"(Python {runtime.get('python', '?')}).")
    print(f"Machine: {host} at the start.  Command: `{command}`.\n")
    print(f"`tok.encode(text, {{ offsets: true }})` (ids and UTF-16 offsets) against `tok.encode(text)`, "
          f"{'the first ' + format(args.offsets_chars, ',') + ' code points' if args.offsets_chars else 'all'} of each "
          f"corpus in one call, median of {args.runs} calls of each (alternated) after an untimed one of each "
          f"(warm: the tokenizer's caches kept); text to the worker and the result back included.\n")
    print("| tokenizer | corpus | KB | encode ms | encode with offsets ms | offsets ÷ ids |")
    print("|---|---|---:|---:|---:|---:|")
    ratios = []
    for m, key, nbytes, a, b in rows:
        ratios.append(b / a)
        print(f"| {OFFSETS_MODELS[m][0]} | {key} | {nbytes / 1000:.0f} | {a:.0f} | {b:.0f} | {b / a:.2f}× |")
    if ratios:
        print(f"\nOffsets ÷ ids: median {statistics.median(ratios):.2f}×, worst {max(ratios):.2f}× "
              f"({sum(r <= 1.5 for r in ratios)} of {len(ratios)} within 1.5×).")
    return 0


def machine() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{bench_common.cpu_model()}, nproc {os.cpu_count()}, {platform.system()} {platform.release()}, "
            f"load average {load}")


def main(argv: list[str] | None = None, command: str | None = None) -> int:
    """Runs the benchmark and prints the tables; 0 when anytok's ids equal native tokenizers'
    everywhere.  `command`: the command line to print (default: this script's, with argv)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="timed encode calls per corpus, median (default 3)")
    ap.add_argument("--visits", type=int, default=3, help="fresh profiles for the time to first count (default 3)")
    ap.add_argument("--models", default=",".join(MODELS),
                    help=f"models for the ids check (default {','.join(MODELS)}); "
                         f"{' and '.join(SPEED_MODELS)} are also timed")
    ap.add_argument("--chunk", type=int, default=512, help="code points per text of the sweep (default 512)")
    ap.add_argument("--sweep-end", type=lambda s: int(s, 0), default=0x110000,
                    help="sweep only the code points below this one (quick runs; default 0x110000)")
    ap.add_argument("--no-sweep", action="store_true", help="skip the code-point sweep (quick runs)")
    ap.add_argument("--corpora", type=Path, default=bench_common.CORPORA_DIR)
    ap.add_argument("--offsets", action="store_true",
                    help="measure only anytok's encode with offsets against its encode (see offsets_bench)")
    ap.add_argument("--offsets-models", default=",".join(OFFSETS_MODELS),
                    help=f"with --offsets (default {','.join(OFFSETS_MODELS)})")
    ap.add_argument("--offsets-chars", type=int, default=200_000,
                    help="with --offsets: the first N code points of each corpus, 0 for all (default 200000)")
    args = ap.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for m in models:
        if m not in MODELS:
            ap.error(f"unknown model {m!r} (known: {', '.join(MODELS)})")
    timed = [m for m in SPEED_MODELS if m in models]
    command = command or "python " + " ".join(shlex.quote(a) for a in ["build_scripts/bench/bench_browser_formats.py",
                                                           *(argv if argv is not None else sys.argv[1:])])
    if args.offsets:
        return offsets_bench(args, command)

    import tokenizers
    from playwright.sync_api import sync_playwright

    started = datetime.datetime.now(datetime.timezone.utc)
    host = machine()
    t0 = time.monotonic()
    build(models, args.corpora)
    url = start_server()
    outside: list[str] = []
    guard = bench_common.guard_into(outside)

    speed: dict = {}
    corpora: dict = {}
    sweep: dict = {}
    runtime: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=bench_common.CHROMIUM, args=bench_common.CHROMIUM_ARGS)
        version = browser.version
        log("time to first count")
        start = first_counts(browser, guard, url, args.visits, timed) if timed else {"ms": {}, "counts": {}}
        for model in models:
            ref = hf_native(model)
            log(f"{model}: loading")
            page, runtime = open_model(browser, guard, url, model)
            if model in timed:
                log(f"{model}: encode speed")
                speed[model] = speeds(page, args.corpora, args.runs)
            log(f"{model}: corpora ids")
            corpora[model] = corpus_parity(page, ref, args.corpora)
            if not args.no_sweep:
                for lib in LIBS:
                    log(f"{model}: code points, {lib}")
                    sweep[model, lib] = code_point_parity(page, ref, lib, args.chunk, args.sweep_end)
            page.context.close()
        browser.close()
        log("done")
    if outside:
        raise SystemExit(f"requests outside 127.0.0.1: {outside[:5]}")

    hf_js_version = json.loads((HF_JS_PACKAGE / "package.json").read_text())["version"]
    print(f"Browser benchmark of tokenizer.json models, {started:%Y-%m-%d %H:%M} UTC ({time.monotonic() - t0:.0f} s): "
          f"headless Chromium {version}; anytok {runtime.get('anytok', '?')} in Pyodide "
          f"{build_web.pinned_pyodide_version()} (Python {runtime.get('python', '?')}); "
          f"`@huggingface/tokenizers` {hf_js_version} (Tokenizers.js); reference: native `tokenizers` "
          f"{tokenizers.__version__} (Python).")
    print(f"Machine: {host} at the start.  Command: `{command}`.\n")

    if timed:
        print(f"Time to first count, ms: navigation of a bare page to the first count of a short text "
              f"({len(START_TEXT)} characters) resolved, library load + tokenizer.json fetch and parse + count; "
              f"median (range) of {args.visits} fresh profiles, first visit and second visit (HTTP cache).\n")
        print("| model | tokenizer.json | visit | anytok | Tokenizers.js | anytok ÷ Tokenizers.js |")
        print("|---|---:|---|---:|---:|---:|")
        for model in timed:
            mib = (OUT / "models" / f"{model}.tokenizer.json").stat().st_size / 2**20
            for visit in ("first", "second"):
                a, h = start["ms"][model, "anytok", visit], start["ms"][model, "tokenizers.js", visit]
                cell = lambda v: f"{statistics.median(v):.0f} ({min(v):.0f}–{max(v):.0f})"  # noqa: E731
                print(f"| {MODELS[model][0]} | {mib:.1f} MiB | {visit} | {cell(a)} | {cell(h)} "
                      f"| {statistics.median(a) / statistics.median(h):.2f}× |")
        print("\nWhere it went, ms, median (parts overlap: anytok's module import starts the worker, "
              "whose Pyodide boots meanwhile):\n")
        print("| model | library | part | first visit | second visit |")
        print("|---|---|---|---:|---:|")
        for model in timed:
            for lib in LIBS:
                for part, values in start["parts"][model, lib, "first"].items():
                    second = start["parts"][model, lib, "second"][part]
                    print(f"| {MODELS[model][0]} | {lib} | {part} | {statistics.median(values):.0f} "
                          f"| {statistics.median(second):.0f} |")
        print()
        for model in timed:
            native = len(hf_native(model).encode(START_TEXT, add_special_tokens=False).ids)
            seen = {lib: sorted(start["counts"][model, lib]) for lib in LIBS}
            same = all(v == [native] for v in seen.values())
            print(f"Count of the start text, {MODELS[model][0]}: native tokenizers {native}; "
                  + ", ".join(f"{lib} {'/'.join(map(str, v))}" for lib, v in seen.items())
                  + ("" if same else "  (NOT the same)") + ".")
        print()

        print(f"Encode, MiB/s of text, median of {args.runs} calls after a warm-up call, each library's cache of "
              f"merged pieces emptied before every call (anytok: text to its worker and ids back included).\n")
        print("| model | corpus | MB | anytok | Tokenizers.js | anytok ÷ Tokenizers.js |")
        print("|---|---|---:|---:|---:|---:|")
        for model in timed:
            for key, file in bench_common.CORPORA.items():
                a, h = speed[model][key, "anytok"], speed[model][key, "tokenizers.js"]
                mb = (args.corpora / file).stat().st_size / 1e6
                print(f"| {MODELS[model][0]} | {key} | {mb:.2f} | {a:.2f} | {h:.2f} | {a / h:.2f}× |")
        print()

    print(f"Ids against native `tokenizers` {tokenizers.__version__} (no special tokens added): each whole corpus; "
          + ("" if args.no_sweep else
             f"every code point below U+{args.sweep_end:04X} but the surrogates ({len(all_code_points(args.sweep_end)):,}) as \"a\" + ch + \"b \", {args.chunk} to a text, "
             f"texts that differ halved down to the code points that differ on their own")
          + ".\n")
    print("| model | library | en | code | zh | ja |" + ("" if args.no_sweep else " code points that differ |"))
    print("|---|---|---|---|---|---|" + ("" if args.no_sweep else "---|"))
    ok = True
    for model in models:
        for lib in LIBS:
            row = [corpora[model][key, lib] for key in bench_common.CORPORA]
            ok &= lib != "anytok" or all(c == "identical" for c in row)
            cells = " | ".join("same" if c == "identical" else c for c in row)
            if not args.no_sweep:
                s = sweep[model, lib]
                ok &= lib != "anytok" or not (s["singles"] or s["context"] or s["errors"])
                detail = f"{len(s['singles']):,}"
                if s["singles"]:
                    detail += f" ({describe(s['singles'], 6)})"
                if s["context"]:
                    detail += f"; {len(s['context'])} texts differ only in context"
                if s["errors"]:
                    detail += f"; {s['errors']} texts raised"
                cells += f" | {detail}"
            print(f"| {MODELS[model][0]} | {lib} | {cells} |")
    print()
    if not args.no_sweep:
        details = {f"{m} {lib}": {"singles": describe(s["singles"], 400), "context": [describe(g, 20) for g in s["context"][:20]]}
                   for (m, lib), s in sweep.items() if s["singles"] or s["context"]}
        if details:
            (OUT / "differences.json").write_text(json.dumps(details, indent=1, ensure_ascii=False) + "\n")
            print(f"(The differing code points, all of them: {(OUT / 'differences.json').relative_to(ROOT)}.)\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
