"""The vocab binary format: round trips, determinism, and a precise error for every damage."""

from __future__ import annotations

import json
import lzma
import random
import zlib

import pytest

import anytok
from anytok import format as vf
from anytok.format import VocabFormatError
from conftest import ALL_ENCODINGS, ROOT, anytok_encoding, tiktoken_encoding


def small_vocab(**kw) -> vf.VocabData:
    tokens = [bytes([i]) for i in range(256)] + [b"ab", b"abc", b"hello", b" world"]
    args = dict(name="tiny", pat_str=r"\p{L}+|\s+|.", tokens=tokens, special_tokens={"<|end|>": 300})
    args.update(kw)
    return vf.VocabData(**args)


def rebuild(raw: bytes, compression: int = vf.COMPRESS_NONE) -> bytes:
    """A file around an arbitrary payload, with a correct header and checksum."""
    stored = raw if compression == vf.COMPRESS_NONE else zlib.compress(raw)
    head = vf.MAGIC + vf._varint(vf.FORMAT_VERSION) + vf._varint(compression) + vf._varint(len(stored)) + vf._varint(len(raw))
    return head + zlib.crc32(stored, zlib.crc32(head)).to_bytes(4, "little") + stored


def payload(vocab: vf.VocabData, tokens_as: str = "text") -> bytes:
    data = vf.dumps(vocab, compression="none", tokens_as=tokens_as)
    r = vf._Reader(data, len(vf.MAGIC), len(data), "x")
    for _ in range(4):
        r.varint("x")
    return data[r.pos + 4 :]


@pytest.mark.parametrize("tokens_as", ["text", "bytes"])
@pytest.mark.parametrize("compression", ["lzma", "zlib", "none"])
def test_round_trip(compression, tokens_as):
    v = small_vocab(ids={258: 400, 259: 401}, explicit_n_vocab=None, source="test")
    data = vf.dumps(v, compression=compression, tokens_as=tokens_as)
    back = vf.loads(data)
    assert (back.texts is not None) == (tokens_as == "text")
    assert back.tokens == v.tokens and back.ids == v.ids and back.special_tokens == v.special_tokens
    assert back.pat_str == v.pat_str and back.name == v.name and back.source == "test"
    assert back.mergeable_ranks()[b"hello"] == 400 and back.mergeable_ranks()[b"a"] == ord("a")
    assert vf.dumps(back, compression=compression, tokens_as=tokens_as) == data  # deterministic
    assert back == v


@pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_tokens_as_text_or_bytes_load_the_same_encoding(name):
    # The shipped files store the tokens as text (field 11); the same vocab stored as bytes
    # (field 4, as anytok wrote before) gives an equal VocabData and an Encoding with the same
    # tables and ids, equal to tiktoken's.
    shipped = (ROOT / "vocab_binaries" / f"{name}.atok").read_bytes()
    text_vocab = vf.loads(shipped)
    assert text_vocab.texts is not None and vf.F_TOKENS not in text_vocab.unknown_fields
    as_bytes = vf.dumps(text_vocab, compression="zlib", tokens_as="bytes")
    bytes_vocab = vf.loads(as_bytes)
    assert bytes_vocab.texts is None
    assert bytes_vocab == text_vocab
    assert text_vocab.token_count() == len(bytes_vocab.tokens)
    assert vf.dumps(bytes_vocab, compression="zlib") == shipped
    from anytok.registry import encoding_from_bytes

    a, b = encoding_from_bytes(shipped), encoding_from_bytes(as_bytes)
    assert a._str_ranks == b._str_ranks and a._invalid_tokens == b._invalid_tokens
    assert a._mergeable_ranks == b._mergeable_ranks == tiktoken_encoding(name)._mergeable_ranks
    assert a._decoder == b._decoder
    text = "Tokens as text ✓ 日本語のテキスト, \U0001f600 and café — 12345"
    assert a.encode(text) == b.encode(text) == tiktoken_encoding(name).encode(text)


def text_field(count: int, sep: int, byte_tokens: list[tuple[int, bytes]], text: bytes) -> bytes:
    """A token texts field (11) laid out by hand; `byte_tokens` as (rank step, bytes)."""
    body = vf._varint(count) + vf._varint(sep) + vf._varint(len(byte_tokens))
    for step, token in byte_tokens:
        body += vf._varint(step) + vf._varint(len(token) - 1) + token
    return vf._field(vf.F_TEXTS, body + text)


def test_token_texts_errors():
    pat = vf._field(vf.F_PATTERN, b"x")
    bar = ord("|")
    ok = vf.loads(rebuild(pat + text_field(4, bar, [(1, b"\xff"), (2, b"\xe4\xb8")], b"a|bc")))
    assert ok.texts == ["a", "bc"] and ok.byte_tokens == {1: b"\xff", 3: b"\xe4\xb8"}
    assert ok.tokens == [b"a", b"\xff", b"bc", b"\xe4\xb8"]
    cases = [
        (text_field(2, 0xD800, [], b"a|b"), "is a surrogate"),
        (text_field(3, bar, [], b"a|b"), "holds 2 token texts, but 3 tokens"),
        (text_field(1, bar, [], b"a|b"), "holds 2 token texts, but 1 tokens"),
        (text_field(2, bar, [], b""), "holds 0 token texts"),
        (text_field(3, bar, [], b"a||b"), "an empty token"),
        (text_field(2, bar, [], b"a|\xff"), "not valid UTF-8"),
        (text_field(2, bar, [(0, b"a")], b"b"), "UTF-8 but stored as bytes"),
        (text_field(3, bar, [(1, b"\xff"), (0, b"\xfe")], b"a"), "not increasing"),
        (text_field(2, bar, [(2, b"\xff")], b"a"), "but there are 2 tokens"),
        (text_field(1, bar, [(0, b"\xff"), (1, b"\xfe")], b""), "count of tokens stored as bytes"),
        (text_field(3, bar, [], b"a|b|a"), "appears more than once"),
        (text_field(3, bar, [(0, b"\xff"), (1, b"\xff")], b"a"), "appears more than once"),
        (text_field(2, bar, [], b"a|b") + vf._field(vf.F_TOKENS, vf._varint(1) + bytes([0]) + b"a"),
         "both the tokens as bytes (field 4) and as text (field 11)"),
    ]
    for field, message in cases:
        assert message in errors_of(rebuild(pat + field)), message
    cfg = vf._field(vf.F_CONFIG, b"{}") + vf._field(vf.F_COLUMNS, vf._varint(0))
    assert "cannot go with a tokenizer config" in errors_of(rebuild(cfg + text_field(1, bar, [], b"a")))


@pytest.mark.parametrize("name", ALL_ENCODINGS)
def test_bundled_files_round_trip(name, tmp_path):
    enc = anytok_encoding(name)
    path = tmp_path / f"{name}.atok"
    anytok.save_encoding(enc, path)
    back = anytok.load_encoding(path)
    assert back._mergeable_ranks == enc._mergeable_ranks
    assert back._special_tokens == enc._special_tokens and back._pat_str == enc._pat_str
    assert back.encode("round trip ✓ 123") == enc.encode("round trip ✓ 123")


def test_sizes():
    assert (ROOT / "vocab_binaries" / "o200k_base.atok").stat().st_size <= 1_000_000


def test_converter_is_deterministic():
    """Re-running the converter reproduces the committed files byte for byte."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(ROOT / "build_scripts" / "convert_openai.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_load_tiktoken_file(reference_dir, tmp_path):
    t = tiktoken_encoding("cl100k_base")
    enc = anytok.load_encoding(reference_dir / "cl100k_base.tiktoken", pat_str=t._pat_str, special_tokens=t._special_tokens)
    assert enc._mergeable_ranks == t._mergeable_ranks
    assert enc.encode("hi there") == t.encode("hi there")
    with pytest.raises(ValueError, match="pat_str"):
        anytok.load_encoding(reference_dir / "cl100k_base.tiktoken")
    with pytest.raises(anytok.VocabSourceError, match="sha256"):
        anytok.load_tiktoken_bpe(reference_dir / "cl100k_base.tiktoken", expected_hash="00" * 32)
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"aGVsbG8= 1\nnot base64! 2\n")
    with pytest.raises(anytok.VocabSourceError, match="line 2"):
        anytok.load_tiktoken_bpe(bad)


# ---- every kind of damage ---------------------------------------------------------------


def errors_of(data: bytes) -> str:
    with pytest.raises(VocabFormatError) as exc:
        vf.loads(data)
    return str(exc.value)


def test_empty_and_short():
    assert "too short" in errors_of(b"")
    assert "too short" in errors_of(b"ANY")


def test_wrong_magic():
    data = vf.dumps(small_vocab())
    assert "magic" in errors_of(b"XNYTOK" + data[6:])
    assert "magic" in errors_of(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)


def test_wrong_version():
    data = bytearray(vf.dumps(small_vocab()))
    data[len(vf.MAGIC)] = 9
    assert "version 9" in errors_of(bytes(data))


def test_unknown_flags():
    data = bytearray(vf.dumps(small_vocab()))
    data[len(vf.MAGIC) + 1] = 0x7E
    assert "flags" in errors_of(bytes(data))


def test_truncated():
    data = vf.dumps(small_vocab())
    assert "truncated" in errors_of(data[:-10])
    assert "truncated" in errors_of(data[:9]) or "checksum" in errors_of(data[:9])


def test_trailing_garbage():
    assert "trailing garbage" in errors_of(vf.dumps(small_vocab()) + b"xx")


def test_bad_checksum():
    data = bytearray(vf.dumps(small_vocab(), compression="none"))
    data[-3] ^= 0x01
    assert "checksum" in errors_of(bytes(data))


def test_bad_compressed_streams():
    raw = payload(small_vocab())
    # a zlib stream that is not zlib
    bad = rebuild(raw)
    bad = bytearray(bad)
    bad[len(vf.MAGIC) + 1] = vf.COMPRESS_ZLIB
    head_len = len(bad) - len(raw) - 4
    bad = bytes(bad[:head_len])
    stored = b"not zlib at all" * 3
    head = bad[: len(vf.MAGIC)] + vf._varint(1) + vf._varint(1) + vf._varint(len(stored)) + vf._varint(len(raw))
    data = head + zlib.crc32(stored, zlib.crc32(head)).to_bytes(4, "little") + stored
    assert "decompress" in errors_of(data)
    # declared size smaller than the real payload (a decompression bomb is cut off)
    stored = zlib.compress(raw)
    head = vf.MAGIC + vf._varint(1) + vf._varint(1) + vf._varint(len(stored)) + vf._varint(10)
    data = head + zlib.crc32(stored, zlib.crc32(head)).to_bytes(4, "little") + stored
    assert "longer than declared" in errors_of(data) or "after decompression" in errors_of(data)
    # absurd declared size
    head = vf.MAGIC + vf._varint(1) + vf._varint(2) + vf._varint(len(stored)) + vf._varint(1 << 40)
    data = head + zlib.crc32(stored, zlib.crc32(head)).to_bytes(4, "little") + stored
    assert "limit" in errors_of(data)
    # lzma garbage
    stored = lzma.compress(raw)[:-20]
    head = vf.MAGIC + vf._varint(1) + vf._varint(2) + vf._varint(len(stored)) + vf._varint(len(raw))
    data = head + zlib.crc32(stored, zlib.crc32(head)).to_bytes(4, "little") + stored
    assert "decompress" in errors_of(data) or "truncated" in errors_of(data)


def test_duplicate_tokens():
    v = small_vocab()
    v.tokens.append(b"ab")
    # dumps refuses, so build the payload by hand
    with pytest.raises(ValueError):
        vf.dumps(v)
    v.tokens[-1] = b"zz"
    raw = payload(v).replace(b"zz", b"ab")
    assert "appears more than once" in errors_of(rebuild(raw))


def test_id_collision_with_special():
    v = small_vocab(special_tokens={"<|end|>": 3})
    assert "already has" in errors_of(rebuild(payload(v)))
    # Two special tokens may share an id (tiktoken's o200k_harmony does); order is kept.
    v = vf.loads(rebuild(payload(small_vocab(special_tokens={"<|b|>": 300, "<|a|>": 300}))))
    assert list(v.special_tokens) == ["<|b|>", "<|a|>"]


def test_ids_not_increasing():
    v = small_vocab(ids={257: 256})
    assert "not increasing" in errors_of(rebuild(payload(v)))


def test_explicit_n_vocab_mismatch():
    v = small_vocab(explicit_n_vocab=5)
    assert "explicit n_vocab" in errors_of(rebuild(payload(v)))


def test_length_past_end():
    v = small_vocab()
    raw = payload(v)
    # cut the tokens field short and fix up nothing else: its declared size now runs past the end
    assert "remain" in errors_of(rebuild(raw[:-3]))


def test_absurd_counts():
    # a tokens field claiming 2**60 tokens must fail fast, not allocate
    field = vf._varint(vf.F_TOKENS << 1 | 1)
    body = vf._varint(1 << 60) + b"\x00" * 4
    pat = vf._field(vf.F_PATTERN, b"x")
    raw = pat + field + vf._varint(len(body)) + body
    assert "token count" in errors_of(rebuild(raw))
    specials = vf._field(vf.F_SPECIALS, vf._varint(1 << 50))
    raw2 = payload(small_vocab(special_tokens={})) + specials
    assert "special token count" in errors_of(rebuild(raw2))


def test_lengths_do_not_add_up():
    body = vf._varint(3) + bytes([0, 0, 0]) + b"abcd"
    raw = vf._field(vf.F_PATTERN, b"x") + vf._field(vf.F_TOKENS, body)
    assert "add up" in errors_of(rebuild(raw))


def test_missing_fields():
    assert "missing required field" in errors_of(rebuild(vf._field(vf.F_NAME, b"x")))


def test_bad_utf8():
    raw = payload(small_vocab()).replace(b"tiny", b"\xff\xfe\xfd\xfc")
    assert "UTF-8" in errors_of(rebuild(raw))


def test_unknown_fields():
    raw = payload(small_vocab())
    optional = vf._varint(50 << 1) + vf._varint(3) + b"new"
    v = vf.loads(rebuild(raw + optional))
    assert v.unknown_fields == {100: b"new"}
    assert vf.loads(vf.dumps(v)).unknown_fields == {100: b"new"}  # kept on re-save
    critical = vf._varint(50 << 1 | 1) + vf._varint(3) + b"new"
    assert "unknown critical field 50" in errors_of(rebuild(raw + critical))


def test_duplicate_field():
    raw = payload(small_vocab())
    assert "appears twice" in errors_of(rebuild(raw + vf._field(vf.F_NAME, b"again")))


def test_wrong_critical_bit():
    raw = vf._varint(vf.F_PATTERN << 1) + vf._varint(1) + b"x" + payload(small_vocab())
    assert "critical bit" in errors_of(rebuild(raw))


def test_fuzz_truncation_and_flips():
    """Random damage to real files always gives VocabFormatError, never anything else."""
    rng = random.Random(1234)
    files = [vf.dumps(small_vocab(), compression=c, tokens_as=t) for c in ("none", "zlib", "lzma") for t in ("text", "bytes")]
    files.append((ROOT / "vocab_binaries" / "r50k_base.atok").read_bytes())
    for data in files:
        for _ in range(150):
            cut = rng.randrange(len(data))
            with pytest.raises(VocabFormatError):
                vf.loads(data[:cut])
            damaged = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
            if bytes(damaged) != data:
                with pytest.raises(VocabFormatError):
                    vf.loads(bytes(damaged))


@pytest.mark.parametrize("tokens_as", ["text", "bytes"])
def test_fuzz_payload_damage_with_valid_checksum(tokens_as):
    """Damage behind a correct checksum reaches the field parser, which must still say what is wrong."""
    rng = random.Random(99)
    v = small_vocab(ids={259: 300}, special_tokens={"<|a|>": 500}, explicit_n_vocab=None)
    v.tokens[-2:] = [b"\xe4\xb8", b" world"]  # a token that is not UTF-8 among the texts
    raw = payload(v, tokens_as)
    for _ in range(800):
        damaged = bytearray(raw)
        kind = rng.random()
        if kind < 0.4:
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        elif kind < 0.7:
            del damaged[rng.randrange(len(damaged)) :]
        else:
            pos = rng.randrange(len(damaged))
            damaged[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 5)))
        try:
            vf.loads(rebuild(bytes(damaged)))
        except VocabFormatError:
            pass  # the expected outcome for most damage; some damage leaves a valid file


def test_load_encoding_of_damaged_file(tmp_path):
    p = tmp_path / "x.atok"
    p.write_bytes(vf.dumps(small_vocab())[:-5])
    with pytest.raises(VocabFormatError):
        anytok.load_encoding(p)


@pytest.mark.parametrize("tokens_as", ["text", "bytes"])
def test_duplicates_found_when_loading_an_encoding(tokens_as):
    """get_encoding's path skips the reader's duplicate check and finds them itself."""
    from anytok.registry import encoding_from_bytes

    v = small_vocab()
    v.tokens[-1] = b"zz"
    data = rebuild(payload(v, tokens_as).replace(b"zz", b"ab"))
    with pytest.raises(VocabFormatError, match="appears more than once"):
        encoding_from_bytes(data)
    # also for tokens that are not valid UTF-8
    v = small_vocab()
    v.tokens[-2:] = [b"\xe4\xb8", b"\xf0\xf0"]
    raw = payload(v, tokens_as)
    at = raw.rfind(b"\xf0\xf0")
    data = rebuild(raw[:at] + b"\xe4\xb8" + raw[at + 2 :])
    with pytest.raises(VocabFormatError, match="appears more than once"):
        encoding_from_bytes(data)


# ---- tokenizers stored as a config with typed columns -------------------------------------


def sample_config():
    rng = random.Random(5)
    return {
        "format": "test.kind",
        "pieces": [f"▁piece{i}" for i in range(300)] + ["\udcff lone", "é"],
        "scores": [rng.uniform(-20, 0) for _ in range(200)],
        "f32": [0.5, -1.25, 3.0] * 40,
        "ids": list(range(-50, 150)),
        "merges": [["a", "b"], ["ab", "c"]] * 60,
        "mixed": [1, 2.5, "x"] * 30,
        "small": [1, 2, 3],
        "nested": {"vocab": {"k": ["v"] * 100}},
    }


@pytest.mark.parametrize("compression", ["lzma", "zlib", "none"])
def test_config_round_trip(compression):
    cfg = sample_config()
    data = vf.dumps(vf.VocabData(name="cfg", config=cfg, source="test"), compression=compression)
    back = vf.loads(data)
    assert back.config == cfg and back.name == "cfg" and back.source == "test"
    assert vf.dumps(back, compression=compression) == data


def test_config_string_column_lengths():
    """Strings of 128 bytes or more have lengths of several varint bytes among the one-byte
    ones; runs of either kind, at the start, middle and end of a column, read back exactly."""
    rng = random.Random(7)
    sizes = [0, 1, 127, 128, 129, 300, 16383, 16384, 70000]
    for trial in range(30):
        strings = ["x" * rng.choice(sizes) + str(i) if rng.random() < 0.3 else f"s{i}" for i in range(rng.randrange(64, 200))]
        if trial % 3 == 0:
            strings[0] = "é" * 200
        if trial % 3 == 1:
            strings[-1] = "y" * 20000
        cfg = {"format": "x", "v": strings}
        assert vf.loads(vf.dumps(vf.VocabData(name="c", config=cfg), compression="none")).config == cfg
    # a column whose last length varint is cut off: an error, not a short column
    r = vf._Reader(vf._varint(200) + b"\x05" * 199 + b"\x80", 0, 202, "column")
    r.varint("count")
    with pytest.raises(VocabFormatError, match="truncated varint for string length"):
        vf._read_strings(r, 200)
    # lengths that add up to more than the column holds
    r = vf._Reader(b"\x05\x05" + b"abcdefgh", 0, 10, "column")
    with pytest.raises(VocabFormatError, match="strings needs 10 bytes but only 8 remain"):
        vf._read_strings(r, 2)


def config_payload(cfg) -> bytes:
    return payload(vf.VocabData(name="cfg", config=cfg))


def test_config_errors():
    raw = config_payload(sample_config())
    assert "not valid JSON" in errors_of(rebuild(raw.replace(b'"format"', b'"format!', 1)))
    # a reference to a column that does not exist
    bad = config_payload({"format": "x", "v": ["a"] * 100}).replace(b'{"$column":0}', b'{"$column":7}')
    assert "column 7" in errors_of(rebuild(bad))
    # a config file may not also hold tiktoken fields
    mixed = config_payload({"format": "x"}) + vf._field(vf.F_PATTERN, b"x")
    assert "cannot go with a tokenizer config" in errors_of(rebuild(mixed))
    # unknown column type
    cols = vf._field(vf.F_COLUMNS, vf._varint(1) + vf._varint(9) + vf._varint(1) + b"\x00")
    raw2 = vf._field(vf.F_NAME, b"x") + vf._field(vf.F_CONFIG, b'{"format":"x"}') + cols
    assert "unknown column type 9" in errors_of(rebuild(raw2))
    with pytest.raises(ValueError):
        vf.dumps(vf.VocabData(name="x", config={"$column": 1}))


def test_config_fuzz():
    rng = random.Random(11)
    raw = config_payload(sample_config())
    for _ in range(400):
        damaged = bytearray(raw)
        damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        try:
            vf.loads(rebuild(bytes(damaged)))
        except VocabFormatError:
            pass


def test_load_recognizes_formats(reference_dir, tmp_path):
    import anytok

    enc = anytok.load(ROOT / "vocab_binaries" / "cl100k_base.atok")
    assert enc.encode("hi") == anytok.get_encoding("cl100k_base").encode("hi")
    t = tiktoken_encoding("cl100k_base")
    enc2 = anytok.load(reference_dir / "cl100k_base.tiktoken", pat_str=t._pat_str, special_tokens=t._special_tokens)
    assert enc2.encode("hello there") == t.encode("hello there")
    folder = tmp_path / "gpt2"
    folder.mkdir()
    (folder / "vocab.bpe").write_bytes((reference_dir / "gpt2_vocab.bpe").read_bytes())
    (folder / "encoder.json").write_bytes((reference_dir / "gpt2_encoder.json").read_bytes())
    g = anytok.load(folder)
    assert g._mergeable_ranks == tiktoken_encoding("gpt2")._mergeable_ranks
    assert g.encode("hello <|endoftext|>", allowed_special="all") == tiktoken_encoding("gpt2").encode("hello <|endoftext|>", allowed_special="all")
    anytok.save(enc, tmp_path / "x.atok")
    assert anytok.load(tmp_path / "x.atok").encode("round trip") == enc.encode("round trip")
    (tmp_path / "junk.bin").write_bytes(b"\x00\x01\x02 garbage")
    with pytest.raises(anytok.VocabSourceError):
        anytok.load(tmp_path / "junk.bin")
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(anytok.VocabSourceError, match="neither"):
        anytok.load(tmp_path / "other.json")


# --- the text index (field 12) -----------------------------------------------------------------


def indexed(name: str) -> bytes:
    return vf.uncompressed((ROOT / "vocab_binaries" / f"{name}.atok").read_bytes(), index=True)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_text_index_finds_every_token_and_nothing_else(name):
    data = indexed(name)
    v = vf.loads(data, check_duplicates=False)
    assert v.index is not None and v.texts is None  # the texts wait until asked for
    ranks = tiktoken_encoding(name)._mergeable_ranks
    texts = {}
    for token, rank in ranks.items():
        try:
            texts[token.decode("utf-8")] = rank
        except UnicodeDecodeError:
            pass
    assert len(texts) == v.token_count() - len(v.byte_tokens)
    assert all(v.index.get(text) == rank for text, rank in texts.items())
    # Not tokens: each token's text with a character more or less, and texts that only hold
    # a token (the index compares whole tokens, followed by the separator).
    rng = random.Random(5)
    for text in rng.sample(sorted(texts), 3000):
        for other in (text + "Q", "Q" + text, text[:-1], text[1:], text + " " + text):
            assert v.index.get(other, -1) == texts.get(other, -1), other
            assert (other in v.index) == (other in texts)
    assert v.index.get("") is None and "" not in v.index
    with pytest.raises(KeyError):
        v.index["not a token at all, surely"]
    assert v == vf.loads((ROOT / "vocab_binaries" / f"{name}.atok").read_bytes())
    assert vf.uncompressed(data, index=True) == data  # one index is enough
    assert vf.F_INDEX not in v.unknown_fields and vf.F_INDEX << 1 not in v.unknown_fields
    assert vf.dumps(v, compression="zlib") == (ROOT / "vocab_binaries" / f"{name}.atok").read_bytes()


def test_encoding_from_an_indexed_file_gives_tiktokens_ids(corpora):
    from anytok import core
    from anytok.files import tokenizer_from_bytes

    data = indexed("o200k_base")
    ref = tiktoken_encoding("o200k_base")
    rng = random.Random(7)
    texts = []
    for _ in range(150):
        source = corpora[rng.choice(["en", "code"])]
        at = rng.randrange(len(source) - 200)
        texts.append(source[at : at + rng.randrange(1, 200)])
    # Runs of one character (merged on bytes), long words (the heap merge), no pieces at all.
    texts += ["a" * 300, "x" * 40 + "y", "".join(rng.choice("abcdefgh") for _ in range(700)), "", " ", "\n\n"]
    for k, text in enumerate(texts):
        if k % 10 == 0:
            tok = tokenizer_from_bytes(data)
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text), text
        assert tok.count(text) == len(ref.encode_ordinary(text)), text
        assert tok.encode(text) == ref.encode(text)
        assert tok._str_ranks_cache is None and tok._index is not None  # all through the index
    assert 0 < tok._index_chars <= core.INDEX_CHARS
    # A longer text (or enough short ones) builds the table, checked as a load checks it.
    long = corpora["en"][:30000]
    assert tok.encode_ordinary(long) == ref.encode_ordinary(long)
    assert tok._str_ranks_cache is not None and tok._index is None
    assert tok._str_ranks == tokenizer_from_bytes((ROOT / "vocab_binaries" / "o200k_base.atok").read_bytes())._str_ranks
    for text in texts[:20]:
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text)
    # Text that is not ASCII never goes through the index.
    fresh = tokenizer_from_bytes(data)
    mixed = "Ünïcödé ✓ 日本語 " + corpora["zh"][:500]
    assert fresh.encode_ordinary(mixed) == ref.encode_ordinary(mixed) and fresh._index is None


def test_text_index_errors():
    pat = vf._field(vf.F_PATTERN, b"x")
    bar = ord("|")
    texts = text_field(3, bar, [(1, b"\xff")], b"ab|c")
    good = vf._index_field(["ab", "c"], bar, [0, 2])
    v = vf.loads(rebuild(pat + texts + vf._field(vf.F_INDEX, good)))
    assert v.index.get("ab") == 0 and v.index.get("c") == 2 and v.index.get("b") is None
    bits, n = good[0], good[1]
    arrays = good[2:]
    cases = [
        (vf._field(vf.F_TOKENS, vf._varint(1) + bytes([0]) + b"a") + vf._field(vf.F_INDEX, good),
         "has a text index (field 12) but no token texts", False),
        (vf._field(vf.F_INDEX, bytes([bits, 3]) + arrays), "indexes 3 token texts, but the file holds 2", True),
        (vf._field(vf.F_INDEX, good[:-1]), "bytes of arrays", True),
        (vf._field(vf.F_INDEX, good + b"\0\0\0\0"), "bytes of arrays", True),
        (vf._field(vf.F_INDEX, bytes([bits]) + b"\x80"), "truncated varint", True),
        # the last bucket start (n) made larger, the first one not 0
        (vf._field(vf.F_INDEX, good[:2] + arrays[: 4 * (1 << bits)] + (9).to_bytes(4, "little") + arrays[4 * ((1 << bits) + 1) :]),
         "out of range", True),
        (vf._field(vf.F_INDEX, good[:2] + (3).to_bytes(4, "little") + arrays[4:]), "out of range", True),
    ]
    for field, message, with_texts in cases:
        assert message in errors_of(rebuild(pat + (texts if with_texts else b"") + field)), message
    # A bucket start past the entries in the middle: the lookup that meets it says so.
    h = zlib.crc32(b"ab") & ((1 << bits) - 1)
    starts = [int.from_bytes(arrays[4 * i : 4 * i + 4], "little") for i in range((1 << bits) + 1)]
    starts[h], starts[h + 1] = 7, 8
    damaged = good[:2] + b"".join(x.to_bytes(4, "little") for x in starts) + arrays[4 * len(starts) :]
    v = vf.loads(rebuild(pat + texts + vf._field(vf.F_INDEX, damaged)), check_duplicates=False)
    with pytest.raises(VocabFormatError, match="starts past the last entry"):
        v.index.get("ab")
    # What only the texts can tell is told when they are decoded: by `loads` (which checks for
    # duplicates), or when an encoding built from the file first needs its table.
    from anytok.files import tokenizer_from_bytes

    for bad, message in [(b"ab|\xff", "not valid UTF-8"), (b"ab|ab", "appears more than once"), (b"ab||cd", "")]:
        n_texts = bad.count(b"|") + 1
        field = text_field(n_texts + 1, bar, [(1, b"\xff")], bad)
        data = rebuild(pat + field + vf._field(vf.F_INDEX, vf._index_field(["ab", "c", "cd"][:n_texts], bar, list(range(n_texts)))))
        if message:
            assert message in errors_of(data)
            tok = tokenizer_from_bytes(data)
            with pytest.raises(VocabFormatError, match=message):
                tok.encode("ab" * 20000)
        else:
            assert "an empty token" in errors_of(data)


# --- derived encodings (the npm package ships o200k_harmony as o200k_base.atok + fields) -------

@pytest.mark.parametrize("name, base", [("o200k_harmony", "o200k_base"), ("gpt2", "r50k_base"), ("p50k_base", "r50k_base"),
                                        ("p50k_edit", "r50k_base"), ("p50k_edit", "p50k_base")])
def test_derived_encoding_from_its_base_file_has_tiktokens_ids(name, base):
    read = lambda n: vf.loads((ROOT / "vocab_binaries" / f"{n}.atok").read_bytes(), n)  # noqa: E731
    fields = vf.derivation(read(base), read(name))
    assert fields is not None and fields["name"] == name and "tokens" not in fields
    assert ("added_tokens" in fields) == (name.startswith("p50k") and base == "r50k_base")
    derived = vf.derive(read(base), json.loads(json.dumps(fields)))  # (as the manifest carries them)
    assert derived.texts is not None  # still tokens stored as text: the Encoding's fast load
    assert derived == read(name)
    enc = anytok.Encoding._from_vocab(derived, name)
    ref = tiktoken_encoding(name)
    text = "hello <|endoftext|> world, naïve 日本語 " + "".join(sorted(ref.special_tokens_set)[:3])
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert enc.n_vocab == ref.n_vocab


def test_derivation_refuses_other_tokens_and_derive_checks_its_fields():
    assert vf.derivation(small_vocab(), small_vocab(tokens=small_vocab().tokens[:-1])) is None
    assert vf.derivation(small_vocab(), small_vocab(name="other")) == {"name": "other"}
    with pytest.raises(VocabFormatError, match="cannot derive tokens"):
        vf.derive(small_vocab(), {"tokens": []})
    with pytest.raises(VocabFormatError, match="special_tokens must map strings to ids"):
        vf.derive(small_vocab(), {"special_tokens": {"<|x|>": "300"}})
    with pytest.raises(VocabFormatError, match="has id 5, which a mergeable token already has"):
        vf.derive(small_vocab(), {"special_tokens": {"<|x|>": 5}})
    with pytest.raises(VocabFormatError, match="explicit n_vocab is 7"):
        vf.derive(small_vocab(), {"explicit_n_vocab": 7})


@pytest.mark.parametrize("as_file", [False, True])
def test_derive_adds_tokens_after_the_bases_last_rank(as_file):
    """p50k_base is r50k_base with more tokens: "added_tokens" ([id, bytes as latin-1], in rank
    order), for tokens that are UTF-8 and tokens that are not, kept by a file read with its tokens
    stored as text."""
    base = small_vocab()
    extra = [b"  ", b"\xe6\x97\xa5", b"\xe6\x97"]  # spaces, a UTF-8 character, bytes that are not UTF-8
    vocab = small_vocab(tokens=base.tokens + extra, ids={260: 262, 261: 263, 262: 264}, special_tokens={"<|end|>": 300})
    fields = vf.derivation(base, vocab)
    assert fields["added_tokens"] == [[262, "  "], [263, "\xe6\x97\xa5"], [264, "\xe6\x97"]]
    fields = json.loads(json.dumps(fields))
    if as_file:
        read = lambda v: vf.loads(vf.dumps(v, compression="none"))  # noqa: E731
        derived = vf.derive(read(base), fields)
        assert derived.texts is not None and derived.byte_tokens[262] == b"\xe6\x97"
        assert derived == read(vocab)
    else:
        assert vf.derive(small_vocab(), fields) == vocab
    enc = anytok.Encoding._from_vocab(vf.derive(small_vocab(), fields), "tiny")
    assert enc.decode_single_token_bytes(264) == b"\xe6\x97" and enc.encode_single_token(b"  ") == 262
    # a base whose tokens are not a prefix of the encoding's, or whose ids differ: no derivation
    assert vf.derivation(base, small_vocab(tokens=[b"zz"] + base.tokens[1:] + extra)) is None
    assert vf.derivation(small_vocab(ids={259: 299}), vocab) is None


@pytest.mark.parametrize("added, message", [
    ("  ", "added_tokens must be a list"),
    ([[262]], "must be \\[id, token\\] pairs"),
    ([[-1, "  "]], "must be \\[id, token\\] pairs"),
    ([["262", "  "]], "must be \\[id, token\\] pairs"),
    ([[262, ""]], "must be \\[id, token\\] pairs"),
    ([[262, b"  "]], "must be \\[id, token\\] pairs"),
    ([[262, "日"]], "is not bytes as code points 0-255"),
    ([], "added_tokens is empty"),
    ([[262, "  "], [263, "  "]], "holds a token twice"),
    ([[262, "ab"]], "added token b'ab' is already a token"),
    ([[262, "a"]], "added token b'a' is already a token"),
    ([[262, "\xff"]], "added token b'\\\\xff' is already a token"),
    ([[259, "  "]], "token ids are not increasing with rank"),
    ([[263, "  "], [262, "   "]], "token ids are not increasing with rank"),
    ([[300, "  "]], "special token '<\\|end\\|>' has id 300, which a mergeable token already has"),
])
@pytest.mark.parametrize("as_file", [False, True])
def test_derive_refuses_bad_added_tokens(added, message, as_file):
    base = vf.loads(vf.dumps(small_vocab(), compression="none")) if as_file else small_vocab()
    with pytest.raises(VocabFormatError, match=message):
        vf.derive(base, {"added_tokens": added})
