"""Generate pkg/anytok/train/sentencepiece/_charsmap_rules.py: sentencepiece's built-in normalization rules
(0.2.1's and 0.2.3's).

sentencepiece's trainer writes, for `normalization_rule_name` nmt_nfkc, nfkc, nmt_nfkc_cf and
nfkc_cf, a table compiled once by its maintainers (`Builder::BuildNmtNFKCMap` and friends, run
with ICU; the table holds Unicode 16.0's compatibility decompositions) and shipped with it:
compiled into the library (src/normalization_rule.h) and, in the Python package, as
`package_data/<name>.bin`, the same bytes as the `precompiled_charsmap` of a model trained with
that rule.  The rule sources (data/*.tsv in sentencepiece's repository) are not on PyPI; the
tables are, so this script reads the rules back from them:

  PyPI sdist sentencepiece==0.2.1 (sha256-pinned in build_scripts/fetch/fetch_sentencepiece_models.py)
    sentencepiece-0.2.1/src/sentencepiece/package_data/{nmt_nfkc,nfkc,nmt_nfkc_cf,nfkc_cf}.bin
  PyPI sdist sentencepiece==0.2.3 (pinned there too): the same files of 0.2.3, whose tables
    differ in a few code points; they are stored as rule sets "NAME@0.2.3", as changes to 0.2.1's.

Each table -> its rules {source: target} (anytok.train.sentencepiece.charsmap.decompile_charsmap)
-> a compact text: rules with a one-character source listed; the longer sources (decomposed
sequences, e.g. Hangul jamo L V T) of each target are always every combination of a few sets of
characters (one set per position), stored as those sets; the three other rule sets as changes
to the closest one -> zlib, base85 -> DATA.

The script then checks that decoding DATA gives the rules back exactly and that
`compile_charsmap` of them gives each table byte for byte (the committed module is what it
verified).  Run:  python build_scripts/gen/gen_spm_charsmap_rules.py      (needs pip, PyPI)
The output is deterministic; rerunning it must not change the committed file.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "build_scripts" / "fetch"))
sys.path.insert(0, str(ROOT / "pkg"))
from fetch_sentencepiece_models import _download  # noqa: E402

from anytok.train.sentencepiece import charsmap as cm  # noqa: E402

OUT = ROOT / "pkg" / "anytok" / "train" / "sentencepiece" / "_charsmap_rules.py"
MEMBER = "sentencepiece-{}/src/sentencepiece/package_data/{}.bin"
# sha256 of each table as shipped (and as written into models by that version's trainer).
TABLES = {
    "0.2.1": {
        "nfkc": "52f11028ff8a7df3e009d94a8b6a54d4a8a17132efb4ccc1c9a0a41e432bd91e",
        "nmt_nfkc": "79372c41389c2b9b29bc171017ab5400e352debd686b02670a42bec709015074",
        "nfkc_cf": "60833ec11201446659c3549c183b18f024c4007628cc6b3a4e91ae007697b826",
        "nmt_nfkc_cf": "22c292c76f503795f30c85d79d30a7f572fff4f49e00392d2d60f4f93e941a1e",
    },
    "0.2.3": {
        "nfkc": "7e46d9e08af4b6a37991b04fb8388644c1595a0abcd0f26d6a5d575e2a3663ea",
        "nmt_nfkc": "1e2c7b43d3ee9755ceaa2ac335e253d8703604e0249ee1e81156c92b46423844",
        "nfkc_cf": "d8dfef3d6db0eef0742f8b55a73aee7fce6c1e21d26a09b8d3d4b52c42a791cb",
        "nmt_nfkc_cf": "2c03512e62f9ed965ec90d85314211b63b5b8aa0395311ea2147eec9ff738907",
    },
}


def tables() -> dict[str, bytes]:
    """{rule set name: table}: 0.2.1's under their names, 0.2.3's as "NAME@0.2.3"."""
    out = {}
    for version, shas in TABLES.items():
        with tempfile.TemporaryDirectory() as tmp:
            archive = _download("pypi-sdist", f"sentencepiece=={version}", tmp)
            with tarfile.open(archive) as tar:
                for name, sha in shas.items():
                    member = MEMBER.format(version, name)
                    f = tar.extractfile(member)
                    if f is None:
                        raise SystemExit(f"{archive.name} has no {member}")
                    blob = f.read()
                    actual = hashlib.sha256(blob).hexdigest()
                    if actual != sha:
                        raise SystemExit(f"{member}: sha256 {actual} does not match the expected {sha}")
                    out[name if version == "0.2.1" else f"{name}@{version}"] = blob
    return out


def structure(rules: dict[str, str]) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    singles = {k: v for k, v in rules.items() if len(k) == 1}
    by_target: dict[str, list[str]] = {}
    for k, v in rules.items():
        if len(k) > 1:
            by_target.setdefault(v, []).append(k)
    groups = {}
    for target, keys in by_target.items():
        n = len(keys[0])
        if any(len(k) != n for k in keys):
            raise SystemExit(f"target {target!r}: sources of different lengths; extend the format")
        positions = tuple("".join(sorted({k[i] for k in keys})) for i in range(n))
        count = 1
        for p in positions:
            count *= len(p)
        if count != len(keys):
            raise SystemExit(f"target {target!r}: sources are not all combinations; extend the format")
        groups[target] = positions
    return singles, groups


def _hex(s: str) -> str:
    return " ".join(f"{ord(c):X}" for c in s)


def _section(singles, groups, base, set_index) -> list[str]:
    base_singles, base_groups = base if base else ({}, {})
    lines = []
    prev = 0
    for k in sorted(set(singles) | set(base_singles)):
        if k in singles and base_singles.get(k) == singles[k]:
            continue
        if k not in singles:
            t = "-"
        elif len(singles[k]) == 1:
            t = f"~{ord(singles[k]) - ord(k)}"
        else:
            t = _hex(singles[k])
        lines.append(f"{ord(k) - prev}:{t}")
        prev = ord(k)
    prev = 0
    for t in sorted(set(groups) | set(base_groups)):
        if t in groups and base_groups.get(t) == groups[t]:
            continue
        if len(t) == 1:
            head = f"+{ord(t) - prev}"
            prev = ord(t)
        else:
            head = "/" + _hex(t)
        idx = "-" if t not in groups else " ".join(str(set_index[p]) for p in groups[t])
        lines.append(f"{head}={idx}")
    return lines


def encode(rule_sets: dict[str, dict[str, str]]) -> str:
    structs = {name: structure(r) for name, r in rule_sets.items()}
    sets = sorted({p for _, groups in structs.values() for g in groups.values() for p in g})
    set_index = {p: i for i, p in enumerate(sets)}
    lines = [f"sets {len(sets)}"] + [_hex(p) for p in sets]
    done: list[str] = []
    for name, (singles, groups) in structs.items():
        best, best_lines = None, _section(singles, groups, None, set_index)
        for base in done:
            cand = _section(singles, groups, structs[base], set_index)
            if len(cand) < len(best_lines):
                best, best_lines = base, cand
        lines.append(f"rules {name}" + (f" {best}" if best else ""))
        lines += best_lines
        done.append(name)
    return "\n".join(lines)


def render(data: str) -> str:
    packed = base64.b85encode(zlib.compress(data.encode("ascii"), 9)).decode("ascii")
    chunks = [packed[i:i + 96] for i in range(0, len(packed), 96)]
    body = "\n".join(f"    {c!r}" for c in chunks)
    return (
        '"""sentencepiece 0.2.1\'s and 0.2.3\'s built-in normalization rules (generated by\n'
        "build_scripts/gen/gen_spm_charsmap_rules.py from the tables in its PyPI sdist; do not edit).\n"
        "DATA: base85 of zlib of the compact text described in charsmap.py.\"\"\"\n\n"
        f"DATA = (\n{body}\n)\n"
    )


def main() -> int:
    blobs = tables()
    rule_sets = {name: cm.decompile_charsmap(blob) for name, blob in blobs.items()}
    text = encode(rule_sets)
    decoded = cm.decode_rules(text)
    for name, blob in blobs.items():
        singles, groups = decoded[name]
        back = dict(singles)
        for target, positions in groups.items():
            for chars in itertools.product(*positions):
                back["".join(chars)] = target
        if back != rule_sets[name]:
            raise SystemExit(f"{name}: the compact rules do not decode to the table's rules")
        if cm.compile_charsmap(back) != blob:
            raise SystemExit(f"{name}: compiling the rules does not give the shipped table")
        print(f"{name}: {len(back)} rules, table {len(blob)} bytes reproduced")
    OUT.write_text(render(text), encoding="utf-8")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
