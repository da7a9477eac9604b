"""The command line: count, encode, decode, list, convert, inspect."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import CORPORA, CORPORA_DIR, anytok_encoding, tiktoken_encoding


def cli(*args, input=None):
    r = subprocess.run([sys.executable, "-m", "anytok", *map(str, args)], input=input, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def test_count_file_matches_tiktoken():
    path = CORPORA_DIR / CORPORA["en"]
    code, out, _ = cli("count", path, "--encoding", "cl100k_base")
    assert code == 0
    assert int(out) == len(tiktoken_encoding("cl100k_base").encode_ordinary(path.read_text(encoding="utf-8")))


def test_count_several_files_and_model():
    paths = [CORPORA_DIR / CORPORA["en"], CORPORA_DIR / CORPORA["zh"]]
    code, out, _ = cli("count", *paths, "--model", "gpt-4o")
    assert code == 0
    lines = out.strip().splitlines()
    t = tiktoken_encoding("o200k_base")
    counts = [len(t.encode_ordinary(p.read_text(encoding="utf-8"))) for p in paths]
    assert [int(x.split("\t")[0]) for x in lines] == counts + [sum(counts)]


def test_count_stdin_and_specials():
    code, out, _ = cli("count", input="hello world")
    assert (code, out.strip()) == (0, "2")
    code, _, err = cli("count", input="hi <|endoftext|>")
    assert code == 1 and "disallowed special token" in err and "--special" in err
    code, out, _ = cli("count", "--special", "allow", input="hi <|endoftext|>")
    assert (code, out.strip()) == (0, str(len(anytok_encoding("o200k_base").encode("hi <|endoftext|>", allowed_special="all"))))


def test_encode_decode():
    code, out, _ = cli("encode", "--text", "hello world", "-e", "r50k_base")
    assert (code, out.strip()) == (0, "31373 995")
    code, out, _ = cli("encode", "--json", "-e", "r50k_base", input="hello world")
    assert json.loads(out) == [31373, 995]
    code, out, _ = cli("decode", "31373", "995", "-e", "r50k_base")
    assert (code, out) == (0, "hello world")
    code, out, _ = cli("decode", "-e", "r50k_base", input="[31373, 995]")
    assert (code, out) == (0, "hello world")


def test_list_convert_inspect(tmp_path, reference_dir):
    code, out, _ = cli("list")
    assert code == 0 and "o200k_base" in out.split()
    target = tmp_path / "c.atok"
    code, out, err = cli("convert", reference_dir / "cl100k_base.tiktoken", "-o", target, "--like", "cl100k_base")
    assert code == 0, err
    code, out, _ = cli("inspect", target, "--json")
    info = json.loads(out)
    assert info["mergeable_tokens"] == 100256 and info["name"] == "cl100k_base"
    assert info["file_size"] < (reference_dir / "cl100k_base.tiktoken").stat().st_size
    code, out, _ = cli("count", "--vocab", target, input="hello world")
    assert out.strip() == "2"
    bad = tmp_path / "bad.atok"
    bad.write_bytes(target.read_bytes()[:100])
    code, _, err = cli("inspect", bad)
    assert code == 1 and "truncated" in err or "checksum" in err
