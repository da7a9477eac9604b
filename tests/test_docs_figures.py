"""Figures quoted outside their measurement cannot drift: every number in a README table row or a
docs sentence that links to a measured section must be printed in that section.

A README "Headline figures" row links its first cell to the section (docs/benchmarks.md, or a
page's own speed section) that gives the command and full table; each figure in the row's other
cells (ratios like `0.43×` and dates excepted) must appear there.  A sentence in docs/ that links
to docs/benchmarks.md with a figure beside the link likewise.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT
from test_docs import slug as _slug

LINK = re.compile(r"\[[^\]]*\]\(([^)#\s]*\.md)#([^)\s]+)\)")
# A figure: digits with an optional decimal part, not part of a date, a ratio or a word.
FIGURE = re.compile(r"(?<![\w.,/-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w×x/-]|\.\d|,\d{3})")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _section(page: Path, anchor: str) -> str:
    """The text under the heading whose slug is `anchor`, up to the next heading of its level or above."""
    lines = page.read_text(encoding="utf-8").splitlines()
    counts: dict[str, int] = {}
    start = level = None
    for i, line in enumerate(lines):
        m = re.match(r"^(#+)\s+(.*)$", line)
        if not m:
            continue
        slug = _slug(m.group(2))
        n = counts.get(slug, 0)
        counts[slug] = n + 1
        if n:
            slug = f"{slug}-{n}"
        if start is not None and len(m.group(1)) <= level:
            return "\n".join(lines[start:i])
        if start is None and slug == anchor:
            start, level = i, len(m.group(1))
    assert start is not None, f"{page.name}#{anchor}: no such heading"
    return "\n".join(lines[start:])


def _figures(text: str) -> set[str]:
    text = DATE.sub(" ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets hold no figures
    text = re.sub(r"`[^`]*`", " ", text)  # nor code (commands, `"a" * 10**6`)
    return {(m.group(1) + (m.group(2) or "")).replace(",", "") for m in FIGURE.finditer(text)}


def _in(figure: str, section: str) -> bool:
    plain = section.replace(",", "")
    return re.search(rf"(?<![\d.]){re.escape(figure)}(?![\d])", plain) is not None


def _quotes():
    """(where, linked page, anchor, figures) of each README row and docs sentence that quotes figures."""
    readme = ROOT / "README.md"
    for line in readme.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| [") or "](docs/" not in line:
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        m = LINK.search(cells[0])
        if m:
            yield f"README.md: {cells[0]}", ROOT / m.group(1), m.group(2), _figures(" ".join(cells[1:-1]))
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name == "benchmarks.md":
            continue
        text = page.read_text(encoding="utf-8")
        for para in re.split(r"\n\s*\n", text):
            for m in LINK.finditer(para):
                if m.group(1).endswith("benchmarks.md"):
                    # the figures in the parenthesis or clause that holds the link
                    around = para[max(0, m.start() - 120): m.end() + 40]
                    clause = re.split(r"[;:]\s|\.\s", around)
                    near = next((c for c in clause if m.group(0) in c), around)
                    figs = {f for f in _figures(near.replace(m.group(0), " ")) if "." in f or len(f) > 3}
                    if figs:
                        yield f"docs/{page.name}: {near.strip()[:80]}", page.parent / m.group(1), m.group(2), figs


QUOTES = list(_quotes())


def test_quotes_found():
    assert sum(w.startswith("README.md") for w, *_ in QUOTES) >= 10


@pytest.mark.parametrize("where,page,anchor,figures", QUOTES, ids=[q[0][:70] for q in QUOTES])
def test_quoted_figures_come_from_the_linked_section(where, page, anchor, figures):
    section = _section(page, anchor)
    missing = sorted(f for f in figures if not _in(f, section))
    assert not missing, f"{where}: {missing} not in {page.name}#{anchor}"
