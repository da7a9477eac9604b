"""Benchmark of anytok.constrain (token masks) next to llguidance, in one run.

    .venv/bin/python build_scripts/bench_constrain.py [--encoding o200k_base] [--steps 200] [--only json]

Prints, for one encoding:

* trie build: anytok's token trie (once per tokenizer) and llguidance's tokenizer build;
* for each regex, over a seeded random walk of up to --steps tokens (each step samples an
  allowed token and consumes it in both libraries; masks are checked equal on the way):
  the first mask of a new constraint, and the median / p99 / mean time per mask over the
  walk, for anytok (which caches masks per lexer state, so a repeated state costs a lookup)
  and llguidance (natively, `compute_bitmask`);
* the same for JSON Schemas (llguidance's default JSON settings), where "first mask" includes
  compiling the schema; the walks prefer tokens that are not only whitespace and, half of the
  time, tokens with JSON punctuation, so that they get through strings and objects.

The timed calls are the ones a sampler makes: `mask()` in anytok, `compute_bitmask()` in
llguidance.  Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

import anytok  # noqa: E402
from anytok import constrain  # noqa: E402
from anytok.constrain.tokens import TokenTrie  # noqa: E402

from bench_common import cpu_model  # noqa: E402

REGEXES = [
    r"[0-9]{1,5}",
    r"[A-Za-z ,.!?']{1,300}",  # free-text-ish, bounded (a new lexer state almost every step)
    r"[^\n]+",  # free text, one state
    r"(yes|no|maybe), [a-z]+ [0-9]{2,4}!",
    r'\{"name": "[^"\\]{0,40}", "age": [0-9]{1,3}\}',
]


SCHEMAS = [
    ("small object", {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                      "required": ["name", "age"], "additionalProperties": False}),
    ("nested, arrays, enum, bounds", {
        "type": "object", "additionalProperties": False, "required": ["id", "items"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "status": {"enum": ["open", "closed", "pending"]},
            "items": {"type": "array", "minItems": 1, "maxItems": 5, "items": {
                "type": "object", "required": ["sku", "qty"], "additionalProperties": False,
                "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                               "qty": {"type": "integer", "minimum": 1, "maximum": 999},
                               "price": {"type": "number", "minimum": 0}}}},
            "note": {"type": "string", "maxLength": 200}}}),
    ("recursive $ref", {"$ref": "#/$defs/node", "$defs": {"node": {
        "type": "object", "properties": {"name": {"type": "string"},
                                         "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        "required": ["name"]}}}),
    ("any JSON ({})", {}),
]


def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def timed_walk(ours, ref, steps: int, choose, label: str, stop_when_stopped: bool = True):
    """Up to `steps` tokens (`choose(allowed)`, None ends the walk) consumed by both matchers; the
    seconds of each mask, anytok's and llguidance's, checked equal on the way."""
    times, ref_times = [], []
    for _ in range(steps):
        token = choose(ours.allowed())
        if token is None:
            break
        assert ours.consume(token) and ref.consume_token(token)
        t = time.perf_counter()
        m = ours.mask()
        times.append(time.perf_counter() - t)
        t = time.perf_counter()
        r = ref.compute_bitmask()
        ref_times.append(time.perf_counter() - t)
        assert m == r, (label, len(times))
        if stop_when_stopped and ours.is_stopped():
            break
    return times, ref_times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["regex", "json"], help="only the regex rows or only the JSON Schema rows")
    args = ap.parse_args()

    from llguidance import LLMatcher
    from llguidance.tiktoken import lltokenizer_from_encoding

    print(f"# anytok.constrain vs llguidance — {time.strftime('%Y-%m-%d')}, {cpu_model()}, "
          f"Python {platform.python_version()}, {args.encoding}, up to {args.steps} steps per walk")
    enc = anytok.get_encoding(args.encoding)
    t = time.perf_counter()
    TokenTrie.of(enc)
    trie_s = time.perf_counter() - t
    t = time.perf_counter()
    lltok = lltokenizer_from_encoding(enc)
    ll_s = time.perf_counter() - t
    print(f"tokenizer set-up: anytok trie {trie_s:.2f} s, llguidance tokenizer {ll_s:.2f} s")
    print()
    print("| regex | steps | anytok first mask | anytok median | p99 | mean | llguidance first | median | p99 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for pattern in REGEXES if args.only != "json" else []:
        rng = random.Random(f"{args.seed}|{pattern}")
        t = time.perf_counter()
        ours = constrain.regex(pattern).matcher(enc)
        m0 = ours.mask()
        first = time.perf_counter() - t
        ref = LLMatcher(lltok, LLMatcher.grammar_from_regex(pattern), log_level=0)
        t = time.perf_counter()
        r0 = ref.compute_bitmask()
        ref_first = time.perf_counter() - t
        assert m0 == r0, pattern

        def ordinary(allowed):
            tokens = [x for x in allowed if x != enc.eot_token]
            return rng.choice(tokens) if tokens else None

        times, ref_times = timed_walk(ours, ref, args.steps, ordinary, pattern, stop_when_stopped=False)
        ms = lambda x: f"{x * 1e3:.3f} ms"
        if times:
            print(f"| `{pattern}` | {len(times)} | {ms(first)} | {ms(statistics.median(times))} | "
                  f"{ms(_pct(times, 0.99))} | {ms(statistics.fmean(times))} | {ms(ref_first)} | "
                  f"{ms(statistics.median(ref_times))} | {ms(_pct(ref_times, 0.99))} |")
        else:
            print(f"| `{pattern}` | 0 | {ms(first)} | | | | {ms(ref_first)} | | |")

    import json

    trie = TokenTrie.of(enc)
    ws = {t for t, b in trie.token_bytes.items() if not b.strip(b" \t\r\n")}
    punct = {t for t, b in trie.token_bytes.items() if any(c in b for c in b'",:{}[]')}

    def pick(rng, allowed):
        ordinary = [x for x in allowed if x != enc.eot_token]
        if not ordinary:
            return None
        want_punct = rng.random() < 0.5
        for _ in range(30):
            t = rng.choice(ordinary)
            if t not in ws and (not want_punct or t in punct):
                break
        return t

    if args.only != "regex":
        from anytok.constrain.slicer import Slicer

        t = time.perf_counter()
        had = getattr(trie, "_slicer", None) is not None
        Slicer.of(trie)  # built by the first mask that allows most of the vocabulary: time it apart
        if not had:
            print(f"\nslicer (built once per tokenizer, before the JSON rows): {time.perf_counter() - t:.2f} s")
    print()
    print("| JSON Schema | steps | anytok first mask (incl. compile) | anytok median | p99 | mean | "
          "max | llguidance first (incl. compile) | median | p99 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, schema in SCHEMAS if args.only != "regex" else []:
        rng = random.Random(f"{args.seed}|{label}")
        t = time.perf_counter()
        ours = constrain.json_schema(schema).matcher(enc)
        m0 = ours.mask()
        first = time.perf_counter() - t
        t = time.perf_counter()
        ref = LLMatcher(lltok, LLMatcher.grammar_from_json_schema(json.dumps(schema)), log_level=0)
        r0 = ref.compute_bitmask()
        ref_first = time.perf_counter() - t
        assert m0 == r0, label
        times, ref_times = timed_walk(ours, ref, args.steps, lambda allowed: pick(rng, allowed), label)
        ms = lambda x: f"{x * 1e3:.3f} ms"
        print(f"| {label} | {len(times)} | {ms(first)} | {ms(statistics.median(times))} | "
              f"{ms(_pct(times, 0.99))} | {ms(statistics.fmean(times))} | {ms(max(times))} | {ms(ref_first)} | "
              f"{ms(statistics.median(ref_times))} | {ms(_pct(ref_times, 0.99))} |")


if __name__ == "__main__":
    main()
