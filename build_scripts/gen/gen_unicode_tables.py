"""Generate pkg/anytok/_unicode_tables.py, the pinned Unicode data of the split patterns.

The split patterns use \\p{L}, \\p{N}, \\s, ... .  Python's own `unicodedata` follows the
Unicode version of whichever interpreter runs (14.0 in CPython 3.11, 16.0 in Pyodide's 3.14),
so anytok never asks it.  It reads the tables this script writes instead.

Source: the PyPI package `unicodedata2`, pinned below.  Its version is the Unicode version, and
it must equal the one tiktoken's Rust regex engine uses (16.0.0 for tiktoken 0.14; the test
`tests/test_unicode_tables.py` proves it against tiktoken).  White_Space is not exposed by
unicodedata2; it is listed here from PropList.txt (unchanged since Unicode 6.3).

Run:  python -m pip install unicodedata2==16.0.0 && python build_scripts/gen/gen_unicode_tables.py
(unicodedata2 is a test dependency: see pyproject.toml.)
The output is deterministic; rerunning it must not change the committed file.
"""

from __future__ import annotations

import sys
from pathlib import Path

PINNED = "16.0.0"

# PropList.txt, property White_Space (Unicode 6.3 .. 17.0).
WHITE_SPACE = [
    (0x0009, 0x000D), (0x0020, 0x0020), (0x0085, 0x0085), (0x00A0, 0x00A0),
    (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F),
    (0x205F, 0x205F), (0x3000, 0x3000),
]

# CaseFolding.txt (simple and common foldings) maps exactly these non-ASCII code points onto
# ASCII letters; every other ASCII letter's case class is just {lower, upper}.
ASCII_CASE_EXTRAS = {"k": [0x212A], "s": [0x017F]}

OUT = Path(__file__).resolve().parents[2] / "pkg" / "anytok" / "_unicode_tables.py"


def category_runs(ud) -> list[tuple[int, str]]:
    runs: list[tuple[int, str]] = []
    last = None
    for cp in range(0x110000):
        cat = ud.category(chr(cp))
        if cat != last:
            runs.append((cp, cat))
            last = cat
    return runs


def render(runs: list[tuple[int, str]]) -> str:
    items = [f"{start:X}{cat}" for start, cat in runs]
    lines, line = [], ""
    for item in items:
        if len(line) + len(item) + 1 > 92:
            lines.append(line)
            line = ""
        line += item + " "
    lines.append(line)
    body = "\n".join(f'    "{chunk}"' for chunk in lines)
    ws = ", ".join(f"(0x{a:04X}, 0x{b:04X})" for a, b in WHITE_SPACE)
    extras = ", ".join(f'"{k}": ({", ".join(f"0x{v:04X}" for v in vs)},)' for k, vs in ASCII_CASE_EXTRAS.items())
    return f'''"""Pinned Unicode {PINNED} data for the split patterns.  GENERATED, do not edit.

Regenerate with:  python build_scripts/gen/gen_unicode_tables.py  (needs unicodedata2=={PINNED}).
"""

UNICODE_VERSION = "{PINNED}"

# General category of every code point, as runs: "<first code point in hex><category>",
# each run lasting until the next one starts; the last run ends at U+10FFFF.
CATEGORY_RUNS = (
{body}
)

# Property White_Space (PropList.txt), inclusive ranges.
WHITE_SPACE = ({ws})

# Non-ASCII code points that case-fold to an ASCII letter (CaseFolding.txt, status C and S).
ASCII_CASE_EXTRAS = {{{extras}}}
'''


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT, help="where to write (default: the package's table)")
    args = ap.parse_args()
    try:
        import unicodedata2 as ud
    except ImportError:
        print(f"needs the PyPI package unicodedata2=={PINNED}", file=sys.stderr)
        return 2
    if ud.unidata_version != PINNED:
        print(f"unicodedata2 has Unicode {ud.unidata_version}, need {PINNED}", file=sys.stderr)
        return 2
    text = render(category_runs(ud))
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
