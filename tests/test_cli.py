"""The command line: count, encode, decode, list, convert, inspect."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import anytok

from conftest import CORPORA, CORPORA_DIR, ROOT, tiktoken_encoding


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
    assert [int(x.split()[0]) for x in lines] == counts + [sum(counts)]


def test_count_stdin_and_specials():
    """On the command line text that spells a special token is plain text by default (the
    Python API keeps tiktoken's default); --special raise / allow as asked."""
    t = tiktoken_encoding("o200k_base")
    code, out, _ = cli("count", input="hello world")
    assert (code, out.strip()) == (0, "2")
    code, out, _ = cli("count", input="hi <|endoftext|>")
    assert (code, int(out)) == (0, len(t.encode_ordinary("hi <|endoftext|>")))
    code, out, err = cli("count", "--special", "raise", input="hi <|endoftext|>")
    assert code == 1 and "special token '<|endoftext|>'" in err and "--special" in err
    code, out, _ = cli("count", "--special", "allow", input="hi <|endoftext|>")
    assert (code, out.strip()) == (0, str(len(t.encode("hi <|endoftext|>", allowed_special="all"))))
    code, out, _ = cli("encode", "--json", input="hi <|endoftext|>")
    assert (code, json.loads(out)) == (0, t.encode_ordinary("hi <|endoftext|>"))
    code, out, err = cli("encode", "--special", "raise", input="hi <|endoftext|>")
    # (the CLI's words: flags, not tiktoken's Python arguments)
    assert code == 1 and "special token '<|endoftext|>'" in err and "--special text" in err, err
    assert "allowed_special" not in err and "disallowed_special" not in err, err
    import anytok
    with pytest.raises(ValueError, match="disallowed special token"):
        anytok.get_encoding("o200k_base").count("hi <|endoftext|>")


def test_readme_first_command_counts_readme():
    """The README's main command, on the README (which spells <|endoftext|>)."""
    readme = ROOT / "README.md"
    code, out, err = cli("count", readme, "--encoding", "o200k_base")
    assert code == 0, err
    assert int(out) == len(tiktoken_encoding("o200k_base").encode_ordinary(readme.read_text(encoding="utf-8")))


def test_version_and_program_name():
    import anytok
    code, out, _ = cli("--version")
    assert (code, out.strip()) == (0, f"anytok {anytok.__version__}")
    code, out, _ = cli("count", "--help")
    assert code == 0 and out.startswith("usage: python -m anytok count")
    # The installed console script (`anytok = "anytok.cli:run"`) calls itself anytok.
    script = "import sys; from anytok.cli import run; sys.argv[0] = '/usr/local/bin/anytok'; run()"
    r = subprocess.run([sys.executable, "-c", script, "count", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("usage: anytok count")
    r = subprocess.run([sys.executable, "-c", script, "count", "--bogus"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("usage: anytok ")


def test_bare_command_prints_help():
    code, out, err = cli()
    assert code == 0 and out.startswith("usage: python -m anytok") and "count" in out and "Exact" in out, err


def test_error_messages_speak_cli(tmp_path):
    """Every command's errors start with `anytok: error:` and name flags, not Python arguments."""
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"GGFU" + bytes(60))
    text = tmp_path / "t.txt"
    text.write_text("hello")
    # A damaged GGUF: the header reader names the bad magic (VocabFormatError), not "unrecognized".
    code, out, err = cli("count", str(text), "--vocab", str(bad))
    assert code == 1 and err.startswith("anytok: error:") and "b'GGFU', not b'GGUF'" in err, err
    with pytest.raises(anytok.VocabFormatError, match="not a valid GGUF header"):
        anytok.load(str(bad))
    code, out, err = cli("encode", "-t", "<|endoftext|>", "--special", "raise")
    assert code == 1 and err.startswith("anytok: error:") and "--special" in err, err
    code, out, err = cli("train", str(text), "--vocab-size", "300", "--style", "hf", "-o", str(tmp_path / "x.unknown"))
    assert code == 2 and err.startswith("anytok: error:") and "suffix" in err, err  # a usage error
    code, out, err = cli("convert", str(text), "-o", str(tmp_path / "o.atok"))
    assert code == 1 and err.startswith("anytok: error:"), err


def test_vocab_columns_are_headed_by_file_names(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    src = ROOT / "vocab_binaries" / "gpt2.atok"
    for d in ("a", "b"):
        (tmp_path / d / "gpt2.atok").write_bytes(src.read_bytes())
    (tmp_path / "r50k.atok").write_bytes((ROOT / "vocab_binaries" / "r50k_base.atok").read_bytes())
    text = tmp_path / "t.txt"
    text.write_text("hello world")
    code, out, err = cli("count", str(text), "--vocab", str(tmp_path / "a" / "gpt2.atok"),
                         "--vocab", str(tmp_path / "b" / "gpt2.atok"), "--vocab", str(tmp_path / "r50k.atok"))
    assert code == 0, err
    assert out.splitlines()[0].split() == ["a/gpt2.atok", "b/gpt2.atok", "r50k.atok", "path"]


def test_every_argument_has_help():
    import argparse

    from anytok.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {a.option_strings[0] if a.option_strings else a.dest}"
               for name, p in sub.choices.items() for a in p._actions
               if not a.help and not isinstance(a, argparse._HelpAction)]
    assert not missing


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


def test_convert_inspect_count_every_format(tmp_path):
    """convert / inspect / count / encode take tokenizer.json, SentencePiece .model and tekken
    files (and their .atok conversions), with the reference libraries' ids."""
    import sentencepiece
    from hf_support import hf_tokenizer, model_path

    text = "Hello world! Grüße, 世界 😀\n  indented\tcode()"
    sp_path = model_path("llama3").parent / "mistral_instruct_tokenizer_240323.model.v3"
    tekken_path = model_path("llama3").parent / "tekken_240911.json"
    cases = [
        (model_path("llama3"), hf_tokenizer("llama3").encode(text, add_special_tokens=False).ids, "anytok.hf", "BPE"),
        (model_path("minilm"), hf_tokenizer("minilm").encode(text, add_special_tokens=False).ids, "anytok.hf",
         "WordPiece"),
        (sp_path, sentencepiece.SentencePieceProcessor(model_file=str(sp_path)).encode(text), "anytok.sentencepiece",
         "SentencePiece BPE"),
    ]
    for src, expected, kind, model in cases:
        target = tmp_path / (src.name + ".atok")
        code, out, err = cli("convert", src, "-o", target)
        assert code == 0, err
        assert target.stat().st_size < src.stat().st_size
        for path in (src, target):
            code, out, err = cli("inspect", path, "--json")
            assert code == 0, err
            info = json.loads(out)
            assert (info["kind"], info["model"], info["file_size"]) == (kind, model, path.stat().st_size)
            code, out, err = cli("encode", "--vocab", path, "--json", input=text)
            assert code == 0, err
            assert json.loads(out) == expected
            code, out, err = cli("count", "--vocab", path, input=text)
            assert out.strip() == str(len(expected)), err
    # tekken: a tiktoken-style encoding
    code, out, err = cli("inspect", tekken_path, "--json")
    info = json.loads(out)
    assert code == 0 and info["kind"] == "tiktoken-style encoding" and info["n_vocab"] == 131072
    code, out, err = cli("convert", tekken_path, "-o", tmp_path / "tekken.atok")
    assert code == 0, err
    code, out, err = cli("inspect", tmp_path / "tekken.atok", "--json")
    assert json.loads(out)["mergeable_tokens"] == 130072


def test_docs_synopsis_names_every_option():
    """docs/cli.md's synopsis has a line for every command, naming each of its options (any of
    its spellings) and no option the command does not have."""
    import argparse
    import re

    from anytok.cli import build_parser

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    block = text[text.index("```sh\nanytok count") + 6:]
    block = block[: block.index("```")]
    synopsis: dict[str, str] = {}
    command = None
    for line in block.splitlines():
        m = re.match(r"anytok (\w+)", line)
        if m:
            command = m.group(1)
            line = line[m.end():]
        synopsis[command] = synopsis.get(command, "") + " " + line.split("#")[0]
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(synopsis) == set(sub.choices)
    for name, parser in sub.choices.items():
        shown = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", synopsis[name]))
        spellings = {o for a in parser._actions for o in a.option_strings}
        missing = [a.option_strings for a in parser._actions
                   if a.option_strings and "-h" not in a.option_strings and not shown & set(a.option_strings)]
        assert not missing, f"docs/cli.md: anytok {name} lacks {missing}"
        assert shown <= spellings, f"docs/cli.md: anytok {name} shows {sorted(shown - spellings)}, which it has not"
