"""First constraint in a fresh process: time until its first mask, anytok next to llguidance.

    .venv/bin/python build_scripts/bench/bench_first_mask.py [--encoding o200k_base] [--rounds 5] [--node]

What a program pays for its first constrained step.  Every measurement is a new Python process
(`subprocess.run`), timestamps taken in the child with `time.perf_counter`:

* anytok: `import anytok` + `anytok.constrain`, `anytok.get_encoding`, then "first mask": the
  constraint built, `matcher(enc)` (the tokenizer's token trie: read from its trie file, see
  constrain/trie_cache.py) and the first `mask()`;
* the same with the trie file missing (a fresh temporary `ANYTOK_CACHE_DIR`: this process builds
  the trie, and for free text the slicer, and writes the file), and with no file at all (`ANYTOK_CACHE_DIR=off`,
  as under Pyodide: the trie built, the slicer built lazily by the first free-text mask);
* llguidance 1.9.1: `import llguidance`, then "first mask": its tokenizer made from the same
  anytok encoding (`llguidance.tiktoken.lltokenizer_from_encoding`, as the tests do), the
  constraint (`LLMatcher`) and the first `compute_bitmask()`.

With --node, the same under Pyodide in Node (web/dist/anytok.js, `python build_scripts/build_web.py`
first; a new Node process each, `snapshot: false`): from `AnyTok.load` returning to the first
`mask()` (anytok.constrain imported before, by a constraint over a small byte-level BPE
`tokenizer.json` trained with `tokenizers`), with the trie file in the cache folder (the one the native runs read: Node mounts
that folder, web/worker.js) and with an empty folder (the worker builds the trie and writes the
file); the last column compares the first with the native "trie file" column, in wall clock and
in CPU time (Node's `process.cpuUsage`, the worker thread included).

Constraints: free text (`[^"]{0,200}`: the slicer's case), digits (`[0-9]+`: a narrow walk), a
JSON Schema object.  Each figure is the median over --rounds processes (the configurations
alternate within a round, so a slow period of the machine hits all); the masks of anytok and
llguidance are compared by sha256 (MISMATCH and exit status 1 otherwise).  The last column is
the CPU time of the same interval in the child (`time.process_time`, medians): on a machine
shared with other jobs the wall clock counts their time too, the CPU time mostly does not.  Not a test: numbers
depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_common import cpu_model  # noqa: E402

CONSTRAINTS = [
    ("regex", r'[^"]{0,200}'),
    ("regex", r"[0-9]+"),
    ("json", json.dumps({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                         "required": ["name"]})),
]

ANYTOK_CHILD = r"""
import hashlib, json, sys, time
t0 = time.perf_counter()
import anytok
from anytok import constrain
t1 = time.perf_counter()
enc = anytok.get_encoding(sys.argv[1])
t2 = time.perf_counter()
c2 = time.process_time()
kind, spec = sys.argv[2], sys.argv[3]
c = constrain.regex(spec) if kind == "regex" else constrain.json_schema(spec)
m = c.matcher(enc)
mask = m.mask()
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "cpu": time.process_time() - c2,
                  "sha": hashlib.sha256(mask).hexdigest()}))
"""

LLG_CHILD = r"""
import hashlib, json, sys, time
t0 = time.perf_counter()
import llguidance
from llguidance import LLMatcher
from llguidance.tiktoken import lltokenizer_from_encoding
t1 = time.perf_counter()
import anytok
enc = anytok.get_encoding(sys.argv[1])
t2 = time.perf_counter()
c2 = time.process_time()
kind, spec = sys.argv[2], sys.argv[3]
tok = lltokenizer_from_encoding(enc)
g = LLMatcher.grammar_from_regex(spec) if kind == "regex" else LLMatcher.grammar_from_json_schema(spec)
m = LLMatcher(tok, g, log_level=0)
raw = m.compute_bitmask()
t3 = time.perf_counter()
n = 4 * ((enc.n_vocab + 31) // 32)
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first": t3 - t2, "cpu": time.process_time() - c2,
                  "sha": hashlib.sha256(raw[:n]).hexdigest()}))
"""


NODE_CHILD = r"""
import { createHash } from "node:crypto";
import { AnyTok } from "__ANYTOK__";
import { readFileSync } from "node:fs";
const [encoding, kind, spec, warmup] = process.argv.slice(2);
// anytok.constrain's modules imported first, as the native child imports them before timing:
// a constraint over a small tokenizer.json (no trie file: under 20,000 tokens)
const small = await AnyTok.load({ data: readFileSync(warmup), fileName: "tokenizer.json", snapshot: false });
await (await small.constrain({ [kind === "json" ? "jsonSchema" : "regex"]: spec })).mask();
const tok = await AnyTok.load({ encoding, snapshot: false });
const t0 = performance.now();
const c0 = process.cpuUsage(); // (the process's, worker thread included: Pyodide runs there)
const m = await tok.constrain({ [kind === "json" ? "jsonSchema" : "regex"]: spec });
const mask = await m.mask();
const first = (performance.now() - t0) / 1e3;
const used = process.cpuUsage(c0);
const cpu = (used.user + used.system) / 1e6;
const sha = createHash("sha256").update(Buffer.from(mask.buffer, mask.byteOffset, mask.byteLength)).digest("hex");
console.log(JSON.stringify({ first, cpu, trie: m.trie, sha }));
AnyTok.terminate();
"""


def run_node(script: Path, args: list, cache: str) -> dict:
    env = dict(os.environ, ANYTOK_CACHE_DIR=cache)
    out = subprocess.run(["node", str(script), *args, str(script.parent / "small.json")], capture_output=True,
                         text=True, env=env)
    if out.returncode:
        raise SystemExit(f"node child failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(code: str, args: list, env_extra: dict) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "pkg"), **env_extra)
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
    if out.returncode:
        raise SystemExit(f"child failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--node", action="store_true", help="also time the first mask under Pyodide in Node")
    args = ap.parse_args()
    node_script = None
    if args.node:
        shim = ROOT / "web" / "dist" / "anytok.js"
        if not shim.exists():
            raise SystemExit("web/dist/anytok.js is missing: run python build_scripts/build_web.py first")
        node_script = Path(tempfile.mkdtemp(prefix="anytok-node-")) / "first.mjs"
        node_script.write_text(NODE_CHILD.replace("__ANYTOK__", shim.as_uri()))
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

        small = Tokenizer(models.BPE())
        small.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        small.decoder = decoders.ByteLevel()
        small.train_from_iterator(["a small corpus for a small tokenizer"] * 10, trainers.BpeTrainer(
            vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
        (node_script.parent / "small.json").write_text(small.to_str())
    print(f"# first constraint in a fresh process, {args.encoding}; {cpu_model()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; median of {args.rounds} processes each")
    warm = tempfile.mkdtemp(prefix="anytok-trie-")
    # one untimed run writes the trie file the warm runs read (and compiles bytecode)
    run(ANYTOK_CHILD, [args.encoding, *CONSTRAINTS[0]], {"ANYTOK_CACHE_DIR": warm})
    run(LLG_CHILD, [args.encoding, *CONSTRAINTS[0]], {})
    bad = 0
    node_head = " Node, trie file | Node, file written | Node ÷ native (trie file): wall / CPU |" if node_script else ""
    print("| constraint | anytok, trie file | anytok, file written | anytok, no file | llguidance | ratio (file) "
          "| CPU: anytok (file) / llguidance |" + node_head)
    print("|---|---|---|---|---|---|---|" + "---|" * (3 if node_script else 0))
    for kind, spec in CONSTRAINTS:
        res: dict = {"warm": [], "cold": [], "none": [], "llg": []}
        if node_script:
            res["node"], res["node_cold"] = [], []
        shas = set()
        for _ in range(args.rounds):
            res["warm"].append(run(ANYTOK_CHILD, [args.encoding, kind, spec], {"ANYTOK_CACHE_DIR": warm}))
            res["llg"].append(run(LLG_CHILD, [args.encoding, kind, spec], {}))
            res["none"].append(run(ANYTOK_CHILD, [args.encoding, kind, spec], {"ANYTOK_CACHE_DIR": "off"}))
            with tempfile.TemporaryDirectory(prefix="anytok-trie-") as cold:
                res["cold"].append(run(ANYTOK_CHILD, [args.encoding, kind, spec], {"ANYTOK_CACHE_DIR": cold}))
            if node_script:
                res["node"].append(run_node(node_script, [args.encoding, kind, spec], warm))
                with tempfile.TemporaryDirectory(prefix="anytok-trie-") as cold:
                    res["node_cold"].append(run_node(node_script, [args.encoding, kind, spec], cold))
                if [res["node"][-1]["trie"], res["node_cold"][-1]["trie"]] != ["file", "built"]:
                    raise SystemExit(f"Node's trie: {res['node'][-1]['trie']} / {res['node_cold'][-1]['trie']}")
            for rs in res.values():
                shas.add(rs[-1]["sha"])
        med = {k: statistics.median(r["first"] for r in rs) for k, rs in res.items()}
        cpu = {k: statistics.median(r["cpu"] for r in rs) for k, rs in res.items()}
        label = f"{kind} `{spec if len(spec) < 40 else spec[:37] + '...'}`"
        flag = "" if len(shas) == 1 else " MISMATCH"
        bad += bool(flag)
        print(f"| {label}{flag} | {med['warm'] * 1e3:.0f} ms | {med['cold'] * 1e3:.0f} ms | {med['none'] * 1e3:.0f} ms "
              f"| {med['llg'] * 1e3:.0f} ms | {med['warm'] / med['llg']:.2f}x "
              f"| {cpu['warm'] * 1e3:.0f} / {cpu['llg'] * 1e3:.0f} ms |"
              + (f" {med['node'] * 1e3:.0f} ms | {med['node_cold'] * 1e3:.0f} ms | {med['node'] / med['warm']:.2f}x / "
                 f"{cpu['node'] / cpu['warm']:.2f}x |"
                 if node_script else ""))
    imp = statistics.median(r["import"] for r in res["warm"])
    load = statistics.median(r["load"] for r in res["warm"])
    print(f"\nbefore the first constraint (medians, last row's processes): import anytok + constrain {imp * 1e3:.0f} ms, "
          f"get_encoding {load * 1e3:.0f} ms; import llguidance "
          f"{statistics.median(r['import'] for r in res['llg']) * 1e3:.0f} ms")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
