"""The benchmark's own building blocks: its worst-case inputs and the HF tokenizer.json builder.

(The benchmark itself is a script, build_scripts/bench/bench.py, not a test; it checks the peers' ids
against tiktoken's every time it runs.)
"""

from __future__ import annotations

import unicodedata

import pytest
import regex

import bench
import hf_from_ranks
from conftest import anytok_encoding, tiktoken_encoding


def test_byte_alphabet_is_printable_and_reversible():
    alphabet = hf_from_ranks.byte_to_unicode()
    assert sorted(alphabet) == list(range(256))
    assert len(set(alphabet.values())) == 256
    assert all(c.isprintable() and not c.isspace() for c in alphabet.values())
    assert alphabet[ord("a")] == "a" and alphabet[ord(" ")] == "\u0120"  # GPT-2's "Ġ"


def test_last_merge_follows_tiktoken_rule():
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5}
    # "bc" (3) merges before "ab" (4): abc = a + bc
    assert hf_from_ranks.last_merge(b"abc", ranks) == (b"a", b"bc")
    assert hf_from_ranks.last_merge(b"ab", ranks) == (b"a", b"b")
    # a token BPE cannot reach from its own bytes has no merge
    assert hf_from_ranks.last_merge(b"abc", {b"a": 0, b"b": 1, b"c": 2, b"abc": 3}) is None


def test_build_lists_merges_in_rank_order():
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"bc": 256, b"ab": 257, b"abc": 258, b" a": 259})
    doc = hf_from_ranks.build(ranks, r"\s+|\S+", {"<|endoftext|>": 260})
    assert doc["model"]["merges"] == [["b", "c"], ["a", "b"], ["a", "bc"], ["\u0120", "a"]]
    assert doc["model"]["vocab"]["\u0120a"] == 259
    assert doc["added_tokens"][0]["id"] == 260


def test_adapted_patterns():
    cl100k = hf_from_ranks.adapt_pattern(tiktoken_encoding("cl100k_base")._pat_str)
    assert r"(?>\p{N}{1,3})" in cl100k and r"\s++\z" in cl100k and "$" not in cl100k
    o200k = tiktoken_encoding("o200k_base")._pat_str
    assert hf_from_ranks.adapt_pattern(o200k) == o200k  # nothing to adapt
    assert hf_from_ranks.adapt_pattern(r"(ab){2,3}+[x{1}+$]$") == r"(?>(ab){2,3})[x{1}+$]\z"


@pytest.mark.parametrize("family", bench.FAMILIES)
@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_worst_cases_are_one_piece_of_about_n_bytes(family, encoding):
    n = 10_000
    text = bench.worst_case(family, n)
    assert n - 4 < len(text.encode("utf-8")) <= n
    assert text == bench.worst_case(family, n)  # seeded
    if family.startswith("lo"):
        assert all(unicodedata.category(c) == "Lo" for c in text)
    assert regex.findall(tiktoken_encoding(encoding)._pat_str, text) == [text]


def test_lo_mix_uses_many_scripts_and_astral_letters():
    text = bench.worst_case("lo_mix", 100_000)
    assert any(ord(c) > 0xFFFF for c in text)
    blocks = {ord(c) >> 8 for c in text}
    assert len(blocks) > 40


def test_anatomy_counts_the_merges_tiktoken_makes(corpora):
    """bench_anatomy.py's stage figures rest on which pieces miss the vocabulary and how many
    merge steps their BPE takes: both checked against tiktoken on a slice of each ASCII corpus."""
    import bench_anatomy

    tk = tiktoken_encoding("o200k_base")
    for key in ("en", "code"):
        text = corpora[key][:20_000]
        row = bench_anatomy.anatomy(anytok_encoding("o200k_base"), {}, text, runs=1)
        pieces = regex.findall(tk._pat_str, text)
        missed = set(pieces) - {t.decode("utf-8", "replace") for t in tk.token_byte_values()}
        assert row["pieces"] == len(pieces)
        assert row["distinct misses"] == len(missed) > 10
        assert row["merge steps"] == sum(len(p) - len(tk.encode_ordinary(p)) for p in missed)
        assert all(row[stage] > 0 for stage in ("anytok encode", "split (findall)", "lookups", "merge distinct misses"))


def test_bench_constrain_compare_finds_the_first_differing_step():
    """bench_constrain.py --pyodide's check of the Pyodide masks against the native ones."""
    import bench_constrain

    def row(shas, tokens):
        return {"kind": "regex", "label": "x", "first_sha": "00", "shas": shas, "tokens": tokens}

    same = {"rows": [row(["aa", "bb"], [1, 2])]}
    assert bench_constrain.compare(same, same)[:2] == ([], 3)
    problems, _, _ = bench_constrain.compare(same, {"rows": [row(["aa", "cc"], [1, 2])]})
    assert problems == ["'x': step 2: masks differ"]
    problems, _, _ = bench_constrain.compare(same, {"rows": [row(["aa"], [1])]})
    assert problems == ["'x': 2 steps natively, 1 under Pyodide"]


def test_bench_constrain_pyodide_masks_equal_native():
    """bench_constrain.py --pyodide on 2-step walks with a small vocabulary: the walks run under
    Pyodide (in Node) and their masks' sha256 equal the native ones (llguidance's too)."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    if not (root / "web" / "node_modules" / "pyodide" / "pyodide.mjs").exists():
        pytest.fail("web/node_modules/pyodide is missing: run build_scripts/build_web.py (npm ci in web/)")
    assert shutil.which("node"), "node is needed (the test setup installs npm, which brings it)"
    run = subprocess.run([sys.executable, str(root / "build_scripts" / "bench" / "bench_constrain.py"), "--pyodide",
                          "--encoding", "r50k_base", "--steps", "2"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "all identical natively and under Pyodide" in run.stdout
    assert "Pyodide ÷ native (median)" in run.stdout
    assert "[emscripten] json 'any JSON ({})'" in run.stderr
