"""The seeded random walks of bench_constrain.py, one code for its native run and its Pyodide run.

bench_constrain.py imports this module and calls `run_walks` natively, with llguidance beside
anytok (the `reference` hooks); with --pyodide it also runs this very file as a script under
Pyodide's CPython in Node (pyodide_run.mjs), which calls `run_walks` without a reference and
writes the results as JSON:

    (under Pyodide) constrain_walks.py PKG_DIR PARAMS.json OUT.json

Standard library and anytok only (all that Pyodide has here).  Each walk draws its tokens from
`random.Random(f"{seed}|{label}")`, which gives the same numbers under every CPython 3, so the
two runs take the same tokens as long as their masks agree; every result carries its tokens and
the sha256 of every mask (the first one included), which bench_constrain.py compares.
"""

from __future__ import annotations

import hashlib
import json
import platform
import random
import sys
import time

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


class Reference:
    """What a reference matcher (llguidance, natively) does beside anytok during the walks."""

    def start(self, kind: str, spec, first_mask: bytes, label: str) -> float:
        """Compile `spec` (a regex or a JSON Schema), compute its first mask, check it equals
        `first_mask`; return the seconds of the timed part."""
        raise NotImplementedError

    def step(self, token: int, mask: bytes, label: str, step: int) -> float:
        """Consume `token`, compute the mask, check it equals `mask`; return the mask's seconds."""
        raise NotImplementedError


def _sha(mask: bytes) -> str:
    return hashlib.sha256(mask).hexdigest()


def _walk(ours, steps: int, choose, label: str, ref, stop_when_stopped: bool) -> dict:
    """Up to `steps` tokens (`choose(allowed)`, None ends the walk) consumed by `ours` (and by
    `ref`); the seconds of each `mask()`, the tokens and the masks' sha256."""
    times, ref_times, tokens, shas = [], [], [], []
    clock = time.perf_counter
    for _ in range(steps):
        token = choose(ours.allowed())
        if token is None:
            break
        assert ours.consume(token), (label, len(times), token)
        t = clock()
        m = ours.mask()
        times.append(clock() - t)
        tokens.append(token)
        shas.append(_sha(m))
        if ref is not None:
            ref_times.append(ref.step(token, m, label, len(times)))
        if stop_when_stopped and ours.is_stopped():
            break
    return {"times": times, "ref_times": ref_times, "tokens": tokens, "shas": shas}


def run_walks(encoding: str, steps: int, seed: int = 0, only: str | None = None,
              make_reference=None, log=None) -> dict:
    """All the walks of the benchmark, in order (trie build, regex rows, slicer, JSON rows).

    `make_reference(enc)`, if given, returns a `Reference` (its set-up is timed after the
    trie's).  `log(str)` gets a line as each walk ends.  Returns a JSON-able dict."""
    import anytok
    from anytok import constrain
    from anytok.constrain.slicer import Slicer
    from anytok.constrain.tokens import TokenTrie

    log = log or (lambda s: None)
    clock = time.perf_counter
    out: dict = {"python": platform.python_version(), "platform": sys.platform, "encoding": encoding,
                 "steps": steps, "seed": seed, "rows": []}
    t = clock()
    enc = anytok.get_encoding(encoding)
    out["load_s"] = clock() - t
    t = clock()
    trie = TokenTrie.of(enc)
    out["trie_s"] = clock() - t
    ref = None
    if make_reference is not None:
        t = clock()
        ref = make_reference(enc)
        out["ref_setup_s"] = clock() - t
    log(f"[{sys.platform}] {encoding}: load {out['load_s']:.2f} s, trie {out['trie_s']:.2f} s")

    def finish(kind: str, label: str, first: float, ref_first, m0: bytes, walk: dict) -> None:
        row = {"kind": kind, "label": label, "first": first, "ref_first": ref_first, "first_sha": _sha(m0), **walk}
        out["rows"].append(row)
        times = sorted(walk["times"])
        med = times[len(times) // 2] * 1e3 if times else float("nan")
        log(f"[{sys.platform}] {kind} {label!r}: {len(times)} steps, first {first * 1e3:.1f} ms, median ~{med:.3f} ms")

    for pattern in REGEXES if only != "json" else []:
        rng = random.Random(f"{seed}|{pattern}")
        had_slicer = getattr(trie, "_slicer", None) is not None
        t = clock()
        ours = constrain.regex(pattern).matcher(enc)
        m0 = ours.mask()
        first = clock() - t
        if not had_slicer and getattr(trie, "_slicer", None) is not None:
            out["slicer_built_by"] = pattern
        ref_first = ref.start("regex", pattern, m0, pattern) if ref is not None else None

        def ordinary(allowed, rng=rng):
            tokens = [x for x in allowed if x != enc.eot_token]
            return rng.choice(tokens) if tokens else None

        walk = _walk(ours, steps, ordinary, pattern, ref, stop_when_stopped=False)
        finish("regex", pattern, first, ref_first, m0, walk)

    if only == "regex":
        return out

    # The JSON walks prefer tokens that are not only whitespace and, half of the time, tokens with
    # JSON punctuation, so that they get through strings and objects.
    ws = {i for i, b in trie.token_bytes.items() if not b.strip(b" \t\r\n")}
    punct = {i for i, b in trie.token_bytes.items() if any(c in b for c in b'",:{}[]')}

    def pick(rng, allowed):
        ordinary = [x for x in allowed if x != enc.eot_token]
        if not ordinary:
            return None
        want_punct = rng.random() < 0.5
        for _ in range(30):
            tok = rng.choice(ordinary)
            if tok not in ws and (not want_punct or tok in punct):
                break
        return tok

    # The slicer is built by the first mask that allows most of the vocabulary (a regex row's, if
    # any ran): built here otherwise, and timed apart from the JSON rows.
    out["slicer_s"] = None
    out.setdefault("slicer_built_by", None)
    if getattr(trie, "_slicer", None) is None:
        t = clock()
        Slicer.of(trie)
        out["slicer_s"] = clock() - t

    for label, schema in SCHEMAS:
        rng = random.Random(f"{seed}|{label}")
        t = clock()
        ours = constrain.json_schema(schema).matcher(enc)
        m0 = ours.mask()
        first = clock() - t
        ref_first = ref.start("json", schema, m0, label) if ref is not None else None
        walk = _walk(ours, steps, lambda allowed, rng=rng: pick(rng, allowed), label, ref, stop_when_stopped=True)
        finish("json", label, first, ref_first, m0, walk)
    return out


def _main_under_pyodide() -> None:
    pkg_dir, params_path, out_path = sys.argv[1:4]
    sys.path.insert(0, pkg_dir)
    with open(params_path, encoding="utf-8") as f:
        params = json.load(f)
    if params.get("cache"):  # the native run's trie file (bench_constrain.py)
        import os

        os.environ["ANYTOK_CACHE_DIR"] = params["cache"]
    out = run_walks(params["encoding"], params["steps"], params["seed"], params["only"],
                    log=lambda s: print(s, flush=True))
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    _main_under_pyodide()
