"""`anytok count` beyond one file: text counted in blocks and byte ranges (anytok.stream) against
tiktoken, --jobs, stdin, several tokenizers, budgets, unreadable files, the progress line."""

from __future__ import annotations

import json
import os
import pty
import random
import re
import subprocess
import sys

import pytest

from conftest import CORPORA, CORPORA_DIR, PATTERN_ENCODINGS, anytok_encoding, drain_pty, tiktoken_encoding
from anytok import stream


def cli(*args, input=None, **kw):
    r = subprocess.run([sys.executable, "-m", "anytok", *map(str, args)], input=input, capture_output=True, **kw)
    return r.returncode, r.stdout, r.stderr


def _texts():
    corpora = [(CORPORA_DIR / name).read_text(encoding="utf-8")[:300_000] for name in CORPORA.values()]
    rng = random.Random(7)
    runs = ["a" * 70000, " " * 40000 + "x", "\n" * 50000, "日本語" * 30000, "1234567890" * 5000,
            "".join(rng.choice(" \n\t.,abé中\ud800\udc00\udfff") for _ in range(50000))]
    return corpora + runs


@pytest.mark.parametrize("name", PATTERN_ENCODINGS)
def test_blocks_count_like_tiktoken(name):
    """Any cut points, blocks of any length (shorter and longer than the overlap, single
    characters, runs longer than the overlap that force blocks to be joined), lone surrogates."""
    enc, ref = anytok_encoding(name), tiktoken_encoding(name)
    rng = random.Random(name)
    for text in _texts():
        want = len(ref.encode_ordinary(text))
        for k in (1, 30) if len(text) > 100_000 else (1, 30, 100):
            cuts = set(rng.sample(range(1, len(text)), k))
            if k == 100:  # and some blocks of one or two characters
                c = rng.randrange(1, len(text) - 3)
                cuts |= {c, c + 1, c + 3}
            cuts = sorted(cuts)
            blocks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
            assert stream.count_blocks(enc, blocks) == want
    # Summaries computed apart and combined, as the processes of --jobs do.
    text = _texts()[2][:300_000]
    cuts = [0, 1000, 90_000, 90_100, 200_000, len(text)]
    windows = [stream.summarize(enc, text[a:b], text[b:b + stream.OVERLAP], b == len(text))
               for a, b in zip(cuts, cuts[1:])]
    assert stream.combine(windows) == len(ref.encode_ordinary(text))
    with pytest.raises(stream.NoSync):
        text = "a" * 100_000
        stream.combine([stream.summarize(enc, text[:50_000], text[50_000:50_000 + stream.OVERLAP], False),
                        stream.summarize(enc, text[50_000:], "", True)])


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_block_windows_encode_like_tiktoken(name):
    """Ids of blocks encoded apart (as the browser's parallel workers do) and joined: tiktoken's
    ids of the whole text, whatever the cuts; NoSync where no boundary is shared."""
    enc, ref = anytok_encoding(name), tiktoken_encoding(name)
    rng = random.Random(name + "ids")
    for text in _texts():
        want = ref.encode_ordinary(text)
        for k in (1, 7) if len(text) > 100_000 else (1, 7, 70):
            cuts = sorted(rng.sample(range(1, len(text)), k))
            # (A cut keeps a surrogate pair together, as JavaScript's cuts do: Python gets code points.)
            cuts = [0, *sorted({c + ("\ud800" <= text[c - 1] <= "\udbff") for c in cuts} - {len(text)}), len(text)]
            windows = [stream.encode_window(enc, text[a:b], text[b:b + stream.OVERLAP], b == len(text))
                       for a, b in zip(cuts, cuts[1:])]
            try:
                got = stream.join_ids(windows)
            except stream.NoSync as e:
                # Only where one piece is longer than the overlap: joining the two blocks helps.
                i = e.index
                assert len(text) > stream.OVERLAP and any(len(r) > 30_000 for r in text.split("x")), text[:20]
                joined = [*windows[:i - 1], stream.encode_window(enc, text[cuts[i - 1]:cuts[i + 1]],
                          text[cuts[i + 1]:cuts[i + 1] + stream.OVERLAP], cuts[i + 1] == len(text)), *windows[i + 1:]]
                try:
                    got = stream.join_ids(joined)
                except stream.NoSync:
                    got = enc.encode_ordinary(text)  # (a run longer than two blocks; not this test's point)
            assert got == want
    assert stream.join_ids([]) == []
    text = "a" * 100_000
    with pytest.raises(stream.NoSync):
        stream.join_ids([stream.encode_window(enc, text[:50_000], text[50_000:50_000 + stream.OVERLAP], False),
                         stream.encode_window(enc, text[50_000:], "", True)])


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    """~4.5 MB: the four corpora and runs longer than the overlap, so that byte ranges cut
    through every kind of text and some must be joined."""
    path = tmp_path_factory.mktemp("big") / "big.txt"
    parts = [(CORPORA_DIR / name).read_text(encoding="utf-8") for name in CORPORA.values()]
    path.write_text("a" * 300_000 + parts[0] + parts[3] + " " * 200_000 + parts[1] + parts[2] + "<|endoftext|>",
                    encoding="utf-8")
    return path


def test_jobs_ranges_and_stdin_count_like_tiktoken(big_file):
    text = big_file.read_text(encoding="utf-8")
    want = {name: len(tiktoken_encoding(name).encode_ordinary(text)) for name in ("o200k_base", "r50k_base")}
    for args in (["-j", "1"], ["-j", "2"], ["-j", "5"], []):
        code, out, err = cli("count", big_file, "-e", "o200k_base,r50k_base", "--json", *args)
        assert code == 0, err
        doc = json.loads(out)
        assert doc["total"]["counts"] == want
        assert doc["files"][0]["bytes"] == big_file.stat().st_size and doc["files"][0]["chars"] == len(text)
    data = big_file.read_bytes()
    for args in (["-j", "1"], ["-j", "2"]):
        code, out, err = cli("count", "-", "-e", "r50k_base", *args, input=data)
        assert (code, int(out)) == (0, want["r50k_base"]), err
    # --special raise finds the special token at the very end of the last range.
    code, out, err = cli("count", big_file, "--special", "raise", "-j", "2")
    assert code == 1 and b"special token '<|endoftext|>'" in err


def test_several_tokenizers_side_by_side(tmp_path):
    """-e with a comma list, -m and repeated --vocab give one column each, in the order given."""
    from hf_support import hf_tokenizer, model_path

    text = "Hello world! Grüße, 世界 😀\n  indented\tcode()\n"
    f = tmp_path / "t.txt"
    f.write_text(text, encoding="utf-8")
    g = tmp_path / "u.txt"
    g.write_text(text * 3, encoding="utf-8")
    code, out, err = cli("count", f, g, "-e", "cl100k_base,o200k_base", "--vocab", model_path("llama3"),
                         "-m", "gpt2", "--json")
    assert code == 0, err
    doc = json.loads(out)
    labels = ["cl100k_base", "o200k_base", model_path("llama3").name, "gpt2"]  # a --vocab column: its file name
    assert doc["tokenizers"] == labels and doc["tokenizer"] == "cl100k_base"
    hf = hf_tokenizer("llama3")
    for entry, t in zip(doc["files"], (text, text * 3)):
        expected = [len(tiktoken_encoding("cl100k_base").encode_ordinary(t)),
                    len(tiktoken_encoding("o200k_base").encode_ordinary(t)),
                    len(hf.encode(t, add_special_tokens=False).ids),
                    len(tiktoken_encoding("gpt2").encode_ordinary(t))]
        assert entry["counts"] == dict(zip(labels, expected)) and entry["tokens"] == expected[0]
    code, out, err = cli("count", f, g, "-e", "cl100k_base,o200k_base", text=True)
    lines = out.splitlines()
    assert lines[0].split() == ["cl100k_base", "o200k_base", "path"]
    assert lines[-1].split()[-1] == "total" and len(lines) == 4


def test_max_tokens_and_unreadable_files(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("hello world " * 10)
    n = len(tiktoken_encoding("o200k_base").encode_ordinary(f.read_text()))
    code, out, err = cli("count", f, "--max-tokens", n, text=True)
    assert (code, int(out)) == (0, n)
    code, out, err = cli("count", f, "--max-tokens", n - 1, text=True)
    assert code == 3 and int(out) == n and f"exceed --max-tokens {n - 1}" in err
    code, out, err = cli("count", f, "--max-tokens", n - 1, "--json", text=True)
    doc = json.loads(out)
    assert code == 3 and doc["over_budget"] is True and doc["max_tokens"] == n - 1
    assert f"{n} tokens (o200k_base) exceed --max-tokens {n - 1}" in err  # stderr says so with --json too
    # A missing file is reported, the rest still counted, and the status says so.
    code, out, err = cli("count", tmp_path / "missing.txt", f, "--json", text=True)
    doc = json.loads(out)
    assert code == 1 and doc["total"]["tokens"] == n
    assert doc["skipped"] == [{"path": str(tmp_path / "missing.txt"), "reason": "No such file or directory"}]
    code, out, err = cli("count", tmp_path / "missing.txt", f, text=True)
    assert code == 1 and out.splitlines()[-1].split() == [str(n), "total"] and "missing.txt" in err
    # An explicitly named binary file is skipped with its reason, and counts as a problem.
    (tmp_path / "b.bin").write_bytes(b"abc\0def")
    code, out, err = cli("count", tmp_path / "b.bin", f, text=True)
    assert code == 1 and "b.bin: binary (NUL byte)" in err


def _run_on_tty(args):
    """Run the CLI with stderr on a pseudo-terminal; return (status, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "anytok", *map(str, args)], stdout=subprocess.PIPE,
                         stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    got = drain_pty(master)
    out = p.stdout.read()
    p.wait()
    os.close(master)
    return p.returncode, out, got.decode("utf-8", "replace")


def test_progress_on_a_terminal_only(big_file):
    code, out, tty = _run_on_tty(["count", big_file, "-j", "1"])
    assert code == 0 and int(out) > 0
    # (The rate's unit follows the speed: "KB/s" on a loaded machine.)
    assert re.search(r"files · [\d.]+ MB · [\d.]+M tokens · [\d.]+ [KMG]?B/s", tty), tty
    assert tty.endswith("\r\x1b[K")
    code, out, tty = _run_on_tty(["count", big_file, "-j", "1", "--quiet"])
    assert code == 0 and tty == ""
    code, out, err = cli("count", big_file, "-j", "1")
    assert code == 0 and err == b""  # never on a pipe
