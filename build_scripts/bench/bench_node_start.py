"""Node start-up: a fresh `node` process's time to its first count, without and with the
start-up snapshot a first process kept on disk (docs/browser.md#in-node-and-deno-bun).

    python build_scripts/bench/bench_node_start.py [--rounds 5]

Packs the npm package (build_npm.py), installs it offline in a temporary app folder, then for
each round: with an empty ANYTOK_CACHE_DIR, one process (Python started, anytok imported and
o200k_base loaded, the snapshot made and stored), then one more (the snapshot restored, with
o200k_base in it); and one process with ANYTOK_CACHE_DIR=off (no snapshot at all).  Each time
is the whole process's wall-clock time from its start to the printed count of "hello world"
with o200k_base, and the medians are printed with their ratios to no snapshot's and to the
first process's.  A script, not a test: prints a markdown table with the date, the
machine and the command.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
import bench_common  # noqa: E402
import build_npm  # noqa: E402

SCRIPT = """import { AnyTok } from "anytok";
const tok = await AnyTok.load({ encoding: "o200k_base" });
const n = await tok.count("hello world");
console.log(JSON.stringify({ n, snapshot: tok.runtimeInfo.snapshot }));
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        raise SystemExit("bench_node_start: node and npm are needed")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tgz = build_npm.build(quiet=True, out=tmp / "npm")
        app = tmp / "app"
        app.mkdir()
        (app / "package.json").write_text(json.dumps({"name": "app", "private": True, "type": "module"}))
        (app / "start.mjs").write_text(SCRIPT)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp), "npm_config_update_notifier": "false"}
        subprocess.run([npm, "install", "--offline", "--no-audit", "--no-fund", str(tgz)], cwd=app, env=env,
                       check=True, capture_output=True)

        def start(cache: str, want: str) -> float:
            t0 = time.perf_counter()
            r = subprocess.run([node, "start.mjs"], cwd=app, env={**env, "ANYTOK_CACHE_DIR": cache},
                               capture_output=True, text=True, check=True)
            seconds = time.perf_counter() - t0
            got = json.loads(r.stdout.strip().splitlines()[-1])
            if got != {"n": 2, "snapshot": want}:
                raise SystemExit(f"bench_node_start: expected a {want!r} start counting 2, got {got}")
            return seconds

        times: dict[str, list[float]] = {"off": [], "made": [], "restored": []}
        for i in range(args.rounds):
            cache = tmp / f"cache{i}"
            times["off"].append(start("off", "off"))
            times["made"].append(start(str(cache), "made"))
            times["restored"].append(start(str(cache), "restored"))
            print(f"round {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), file=sys.stderr)
    med = {k: statistics.median(v) for k, v in times.items()}
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{datetime.date.today()}, {bench_common.cpu_model()}, Node {version}, "
          f"`python build_scripts/bench/bench_node_start.py {shlex.join(argv or sys.argv[1:])}`, median of {args.rounds}:\n")
    print("| fresh `node` process to its first count | seconds | vs no snapshot | vs first process |")
    print("|---|---:|---:|---:|")
    for key, label in (("off", "no snapshot (ANYTOK_CACHE_DIR=off)"), ("made", "first process (makes and stores the snapshot)"),
                       ("restored", "second process (restores it)")):
        print(f"| {label} | {med[key]:.2f} | {med[key] / med['off']:.2f}x | {med[key] / med['made']:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
