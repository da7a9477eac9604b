"""anytok.constrain.json_schema against llguidance 1.9.1 on JSONSchemaBench's mask benchmark.

The development half (`../shared/maskbench/maskbench-dev.tar.xz`, see its README) is unpacked
once into a cache directory (`$ANYTOK_MASKBENCH_DIR`, else the system temp dir, named by the
archive's sha256).  For each file: the schema is compiled by llguidance (default options) and by
anytok; when both compile, every test instance is serialized compactly (as llguidance's own
checker: `json.dumps(data, separators=(",", ":"), ensure_ascii=False)`), encoded with o200k_base
and consumed token by token in both matchers: the first rejected token and the final
`is_accepting()` must agree.  Masks are compared (and checked non-empty while the matcher is not
stopped) at every step of the first instance, and at the first `--masks` steps of the others.
A file without test instances (779 of the dev half) gets a walk of 24 random allowed tokens
(seeded by its name) instead, the masks compared at every step.

    python build_scripts/bench/maskbench.py                 # the whole dev half, summary at the end
    python build_scripts/bench/maskbench.py --sample 200    # a seeded sample
    python build_scripts/bench/maskbench.py --files 'Github_easy---o1*' -v
    python build_scripts/bench/maskbench.py --json all.json           # every result, then:
    python build_scripts/bench/maskbench.py --files @names.txt         # the files named in names.txt

`tests/test_maskbench.py` runs `compare_file` on a seeded sample (all of it with ANYTOK_FULL=1).
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import hashlib
import json
import os
import random
import signal
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHIVE = ROOT.parent / "shared" / "maskbench" / "maskbench-dev.tar.xz"
if not ARCHIVE.exists():  # a git worktree: ROOT.parent is /work, the archive is in /work/shared
    ARCHIVE = Path("/work/shared/maskbench/maskbench-dev.tar.xz")
# Dev-half files anytok compiles and llguidance 1.9.1 refuses (docs/constrain-json.md): their
# test instances' verdicts are checked against the `jsonschema` package (tests/test_json_coverage.py).
BEYOND_LLGUIDANCE = ("Github_medium---o44063.json",)
# Dev-half files where llguidance 1.9.1 rejects valid text (and valid prefixes of invalid text) in
# strings with a word-count pattern `^(?:\\S+\\s+){0,N}\\S+$` and a length bound, on some
# instances, depending on what the matchers of the grammar walked before (docs/constrain-json.md):
# there anytok's verdicts are checked against `jsonschema`'s (tests/test_maskbench.py).
LLGUIDANCE_REJECTS_VALID = (
    "Github_hard---o21072.json", "Github_hard---o21073.json", "Github_hard---o21074.json",
    "Github_hard---o21075.json", "Github_hard---o62060.json", "Github_hard---o62061.json",
    "Github_hard---o62065.json", "Github_medium---o21142.json", "Github_ultra---o21136.json",
    "Github_ultra---o62058.json",
)
# Dev-half files where llguidance allows a dead end that anytok leaves out (its mask is
# llguidance's minus those tokens; tests/test_json_coverage.py): in o74466 a `,` after the last
# property that can follow (every key of a `patternProperties` pattern is a required property),
# then only whitespace; in o74424 a `{` opening an object no finite text completes (a required
# property recurses without end), then keys forever.
LLGUIDANCE_DEAD_ENDS = ("Github_hard---o74466.json", "Github_medium---o74424.json")
ARCHIVE_SHA256 = None  # the archive is local reference data; its sha256 names the cache directory


def data_dir(archive: Path = ARCHIVE) -> Path:
    """The unpacked `data/` directory (unpacked on first use, atomically)."""
    h = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    base = Path(os.environ.get("ANYTOK_MASKBENCH_DIR") or tempfile.gettempdir()) / f"anytok-maskbench-{h}"
    done = base / "data"
    if done.is_dir():
        return done
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=base))
    with tarfile.open(archive, "r:xz") as tf:
        tf.extractall(tmp, filter="data")
    try:
        (tmp / "data").rename(done)
    except OSError:  # another process won
        pass
    return done


def files(archive: Path = ARCHIVE) -> list:
    return sorted(data_dir(archive).glob("*.json"))


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _ref_mask(ref, nbytes: int) -> bytes:
    raw = ref.compute_bitmask()
    return bytes(raw[:nbytes]) if not any(raw[nbytes:]) else bytes(raw)


def compare_file(path: Path, enc, lltok, masks: int = 8, timeout: float = 60.0) -> dict:
    """Compare anytok with llguidance on one maskbench file; returns a dict with `status`
    ("both", "neither", "ll_only" = anytok refuses what llguidance compiles, "ours_only",
    "crash", "timeout") and `diffs` (strings naming each disagreement)."""
    from llguidance import LLMatcher

    from anytok import constrain

    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    schema = doc["schema"]
    res = {"file": Path(path).name, "status": None, "diffs": [], "error": None, "tokens": 0}
    try:
        grm = LLMatcher.grammar_from_json_schema(schema)
        probe = LLMatcher(lltok, grm, log_level=0)
        ll_ok = not probe.is_error()
        ll_err = probe.get_error() if not ll_ok else ""
    except Exception as e:  # noqa: BLE001
        ll_ok, ll_err = False, str(e)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    t0 = time.perf_counter()
    try:
        try:
            c = constrain.json_schema(schema)
            ours_ok = True
        except constrain.ConstraintError as e:
            ours_ok, res["error"] = False, f"{type(e).__name__}: {e}"
        res["compile_s"] = time.perf_counter() - t0
        if ours_ok and not ll_ok:
            res["status"] = "ours_only"
            res["error"] = "llguidance: " + str(ll_err)[:200]
        elif not ours_ok:
            res["status"] = "ll_only" if ll_ok else "neither"
        else:
            res["status"] = "both"
            _compare_instances(c, doc, enc, lltok, grm, masks, res)
    except _Timeout:
        res["status"] = "timeout"
        res["diffs"].append(f"timeout after {timeout} s")
    except Exception as e:  # noqa: BLE001  (a crash is a finding, named with its type)
        import traceback

        res["status"] = "crash"
        res["error"] = f"{type(e).__name__}: {e}"[:300]
        res["traceback"] = traceback.format_exc()[-1500:]
        res["diffs"].append(res["error"])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    res["seconds"] = time.perf_counter() - t0
    return res


def _compare_walk(c, doc, enc, lltok, grm, res, steps: int = 24):
    """For a file without test instances: a walk of random allowed tokens (seeded by the file
    name), the masks compared at every step."""
    import zlib

    from llguidance import LLMatcher

    nbytes = 4 * ((enc.n_vocab + 31) // 32)
    rng = random.Random(zlib.crc32(res["file"].encode()))
    ours, ref = c.matcher(enc), LLMatcher(lltok, grm, log_level=0)
    walked = []
    for i in range(steps + 1):
        m = ours.mask()
        rm = _ref_mask(ref, nbytes)
        if m != rm:
            a = set(ours.allowed())
            b = {j for j in range(len(rm) * 8) if rm[j >> 3] >> (j & 7) & 1}
            dec = lambda ids: [enc.decode([x]) for x in sorted(ids)[:5]]  # noqa: E731
            res["diffs"].append(f"walk step {i} ({enc.decode(walked)[-40:]!r}): mask differs: anytok only "
                                f"{dec(a - b)}, llguidance only {dec(b - a)}")
            return
        allowed = ours.allowed()
        if not allowed:
            if not ours.is_stopped():
                res["diffs"].append(f"walk step {i}: empty mask")
            return
        if i == steps:
            break
        t = rng.choice(allowed)
        walked.append(t)
        if not (ours.consume(t) and ref.consume_token(t)):
            res["diffs"].append(f"walk step {i}: token {enc.decode([t])!r} allowed, then rejected")
            return
    if ours.is_accepting() != ref.is_accepting():
        res["diffs"].append(f"walk end: anytok is_accepting {ours.is_accepting()}, llguidance {ref.is_accepting()}")


def _compare_instances(c, doc, enc, lltok, grm, masks, res):
    from llguidance import LLMatcher

    if not doc.get("tests"):
        return _compare_walk(c, doc, enc, lltok, grm, res)
    nbytes = 4 * ((enc.n_vocab + 31) // 32)
    for k, test in enumerate(doc.get("tests", [])):
        text = json.dumps(test["data"], separators=(",", ":"), ensure_ascii=False)
        tokens = enc.encode(text, disallowed_special=())
        res["tokens"] += len(tokens)
        ours = c.matcher(enc)
        ref = LLMatcher(lltok, grm, log_level=0)
        limit = len(tokens) + 1 if k == 0 else masks
        for i, t in enumerate(tokens + [None]):
            if i < limit:
                m = ours.mask()
                if m != _ref_mask(ref, nbytes):
                    a = set(ours.allowed())
                    rm = _ref_mask(ref, nbytes)
                    b = {j for j in range(len(rm) * 8) if rm[j >> 3] >> (j & 7) & 1}
                    dec = lambda ids: [enc.decode([x]) for x in sorted(ids)[:5]]  # noqa: E731
                    res["diffs"].append(f"test {k} step {i} ({text[:40]!r}...): mask differs: anytok only "
                                        f"{dec(a - b)}, llguidance only {dec(b - a)}")
                    return
                if not any(m) and not ours.is_stopped():
                    res["diffs"].append(f"test {k} step {i}: empty mask")
                    return
            if t is None:
                break
            a, b = ours.consume(t), ref.consume_token(t)
            if a != b:
                res["diffs"].append(f"test {k} token {i} ({enc.decode(tokens[:i])[-30:]!r} + "
                                    f"{enc.decode([t])!r}): anytok {'accepts' if a else 'rejects'}, llguidance "
                                    f"{'accepts' if b else 'rejects'}")
                return
            if not a:
                break
        else:
            if ours.is_accepting() != ref.is_accepting():
                res["diffs"].append(f"test {k} end: anytok is_accepting {ours.is_accepting()}, "
                                    f"llguidance {ref.is_accepting()}")
                return


def _resolve(schema, root):
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
        node = root
        for part in schema["$ref"][1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node[part]
        schema = node
    return schema


def _in_schema_order(value, schema, root, validator):
    """`value` with each object's keys in the order its schema lists them (the order in which
    llguidance and anytok generate properties; JSON Schema leaves the order free), following
    `$ref`, the first `anyOf`/`oneOf` option `value` is valid for, `allOf` members, and
    `items`/`properties`/`additionalProperties` into the children."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return value
    parts = [schema] + [_resolve(s, root) for s in schema.get("allOf", [])]
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key, []):
            if validator.evolve(schema=option).is_valid(value):
                parts.append(_resolve(option, root))
                break
    parts = [p for p in parts if isinstance(p, dict)]
    if isinstance(value, dict):
        order, subs = [], {}
        for p in parts:
            for name, sub in p.get("properties", {}).items():
                if name not in subs:
                    order.append(name)
                subs.setdefault(name, []).append(sub)
        extra = [p["additionalProperties"] for p in parts if isinstance(p.get("additionalProperties"), dict)]
        keys = [k for k in order if k in value] + [k for k in value if k not in subs]
        out = {}
        for k in keys:
            v = value[k]
            for sub in subs.get(k, extra):
                v = _in_schema_order(v, sub, root, validator)
            out[k] = v
        return out
    if isinstance(value, list):
        items = [p["items"] for p in parts if isinstance(p.get("items"), dict)]
        out = value
        for sub in items:
            out = [_in_schema_order(v, sub, root, validator) for v in out]
        return out
    return value


def jsonschema_verdicts(doc, c, enc) -> list:
    """[(anytok's verdict, jsonschema's)] per test instance of a maskbench `doc`: anytok's is
    whether the instance (keys in schema order, `_in_schema_order`), serialized compactly and
    consumed token by token by constraint `c`, is accepted whole and ends accepting;
    jsonschema's with `format` asserted (for the formats it has a checker for: `uuid`, `email`,
    `ipv4`, `ipv6`, `date`, ... without optional packages)."""
    import jsonschema

    schema = doc["schema"]
    cls = jsonschema.validators.validator_for(schema)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)  # formats asserted, as anytok does
    out = []
    for test in doc["tests"]:
        data = _in_schema_order(test["data"], schema, schema, validator)
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        m = c.matcher(enc)
        ours = all(m.consume(t) for t in enc.encode(text, disallowed_special=())) and m.is_accepting()
        out.append((ours, validator.is_valid(test["data"])))
    return out


_TOK = {}


def tokenizers():
    """(anytok's o200k_base, llguidance's tokenizer for it), built once per process (~6 s)."""
    if not _TOK:
        import anytok
        from llguidance.tiktoken import lltokenizer_from_encoding

        enc = anytok.get_encoding("o200k_base")
        _TOK["v"] = (enc, lltokenizer_from_encoding(enc))
    return _TOK["v"]


def sample(paths: list, n: int, seed: int = 0) -> list:
    if n >= len(paths):
        return list(paths)
    return sorted(random.Random(seed).sample(paths, n), key=lambda p: p.name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=0, help="a seeded sample of this many files (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--files", default="*",
                    help="globs on file names, comma-separated; @path: the names listed in that file")
    ap.add_argument("--masks", type=int, default=8, help="masks compared per instance after the first")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per file")
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    globs = (Path(args.files[1:]).read_text().split() if args.files.startswith("@")
             else args.files.split(","))
    paths = [p for p in files() if any(fnmatch.fnmatch(p.name, g) for g in globs)]
    if args.sample:
        paths = sample(paths, args.sample, args.seed)
    t0 = time.perf_counter()
    enc, lltok = tokenizers()
    results = []
    for n, p in enumerate(paths):
        r = compare_file(p, enc, lltok, args.masks, args.timeout)
        results.append(r)
        if args.verbose or r["diffs"] or r["status"] in ("ll_only", "ours_only"):
            print(f"[{n + 1}/{len(paths)}] {r['file']}: {r['status']} {r['seconds']:.2f}s "
                  f"{(r['error'] or '')[:160]} {' | '.join(r['diffs'])[:300]}", flush=True)
    st = collections.Counter(r["status"] for r in results)
    ll = st["both"] + st["ll_only"] + st["crash"] + st["timeout"]
    clean = sum(1 for r in results if r["status"] == "both" and not r["diffs"])
    print(f"\n{len(results)} files in {time.perf_counter() - t0:.0f} s")
    print(f"llguidance compiles {ll + 0}; anytok compiles {st['both']} of them, agrees fully on {clean}; "
          f"anytok-only {st['ours_only']}, neither {st['neither']}, crash {st['crash']}, timeout {st['timeout']}")
    bad = [r for r in results if r["diffs"]]
    print(f"differences: {len(bad)}")
    for r in bad:
        print(f"  {r['file']}: {r['diffs'][0][:200]}")
    why = collections.Counter()
    for r in results:
        if r["status"] == "ll_only":
            e = r["error"] or ""
            why[e.split(" at ")[0].split(" (")[0][:110]] += 1
    print("anytok refusals of schemas llguidance compiles, by reason:")
    for k, v in why.most_common():
        print(f"  {v:5d}  {k}")
    times = sorted(r["compile_s"] for r in results if "compile_s" in r)
    if times:
        print(f"compile time: median {times[len(times) // 2] * 1000:.0f} ms, max {times[-1]:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
