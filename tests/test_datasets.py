"""`anytok tokenize` / anytok.datasets: shards byte for byte against references written here with
tiktoken (and HF `tokenizers`) by the layout each format documents, read back by readers
written here (and numpy for .npy); --jobs 1 == --jobs 2; kill and resume; bad records;
dtypes; compressed and parquet inputs; `count --field`."""

from __future__ import annotations

import collections
import gzip
import io
import json
import os
import pty
import random
import re
import signal
import struct
import subprocess
import sys
import time

import pytest

from conftest import CORPORA, CORPORA_DIR, drain_pty, tiktoken_encoding

import anytok.datasets as datasets


# ---- the corpus ----

def _documents(size_each: int = 50_000, seed: int = 1) -> list[str]:
    """Documents cut at random places from the four corpora, and a few odd ones."""
    rng = random.Random(seed)
    docs = []
    for name in CORPORA.values():
        text = (CORPORA_DIR / name).read_text(encoding="utf-8")[:size_each]
        pos = 0
        while pos < len(text):
            n = rng.randint(50, 3000)
            docs.append(text[pos:pos + n])
            pos += n
    rng.shuffle(docs)
    docs[3:3] = ["", "spells <|endoftext|> as text", "   ", "\n\n", "é" * 10]
    return docs


DOCS = _documents()


def _write_inputs(folder, docs=DOCS) -> list[str]:
    """The documents over a .jsonl file, a gzipped .jsonl file and a folder of .txt files (one
    document each), in that order; blank lines and other fields in the .jsonl files."""
    folder.mkdir(parents=True, exist_ok=True)
    a, b, c = len(docs) // 2, 3 * len(docs) // 4, len(docs)
    lines = []
    for i, d in enumerate(docs[:a]):
        lines.append(json.dumps({"id": i, "text": d, "meta": {"text": "not this"}}, ensure_ascii=i % 2 == 0))
        if i % 7 == 0:
            lines.append("")
    (folder / "a.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with gzip.open(folder / "b.jsonl.gz", "wt", encoding="utf-8") as f:
        for d in docs[a:b]:
            f.write(json.dumps({"text": d}) + "\n")
    txt = folder / "c"
    txt.mkdir()
    for i, d in enumerate(docs[b:c]):
        (txt / f"{i:04d}.txt").write_bytes(d.encode("utf-8"))
    return [str(folder / "a.jsonl"), str(folder / "b.jsonl.gz"), str(txt)]


# ---- references, written here from the formats' documented layouts ----

def ref_stream(docs, encode, eot, before: bool) -> list[list[int]]:
    out = []
    for d in docs:
        ids = list(encode(d))
        if eot is not None:
            ids = [eot] + ids if before else ids + [eot]
        out.append(ids)
    return out


def cut_exact(per_doc, n):
    flat = [t for ids in per_doc for t in ids]
    return [flat[i:i + n] for i in range(0, len(flat), n)]


def cut_at_documents(per_doc, n):
    shards, cur = [], []
    for ids in per_doc:
        cur.append(ids)
        if sum(map(len, cur)) >= n:
            shards.append(cur)
            cur = []
    if cur:
        shards.append(cur)
    return shards


def ref_llmc(tokens, wide: bool) -> bytes:
    # llm.c dev/data/data_common.py: 256 int32 header (magic, version, count), then the tokens.
    magic, version = (20240801, 7) if wide else (20240520, 1)
    header = struct.pack("<256i", magic, version, len(tokens), *([0] * 253))
    return header + struct.pack(f"<{len(tokens)}{'I' if wide else 'H'}", *tokens)


def read_llmc(data: bytes) -> list[int]:
    magic, version, n = struct.unpack_from("<3i", data)
    assert struct.unpack_from("<253i", data, 12) == (0,) * 253
    width = {(20240520, 1): 2, (20240801, 7): 4}[(magic, version)]
    assert len(data) == 1024 + n * width
    return list(struct.unpack_from(f"<{n}{'H' if width == 2 else 'I'}", data, 1024))


def ref_megatron(docs: list[list[int]], code: int) -> tuple[bytes, bytes]:
    # Megatron-LM indexed_dataset.py: .bin the tokens; .idx MMIDIDX\0\0, <Q version 1, <B dtype
    # code, <Q sequences, <Q document indices, int32 lengths, int64 byte pointers, int64 indices.
    fmt, size = {8: ("H", 2), 4: ("i", 4)}[code]
    flat = [t for d in docs for t in d]
    bin_ = struct.pack(f"<{len(flat)}{fmt}", *flat)
    lengths = [len(d) for d in docs]
    pointers = [sum(lengths[:i]) * size for i in range(len(lengths))]
    idx = (b"MMIDIDX\x00\x00" + struct.pack("<Q", 1) + struct.pack("<B", code)
           + struct.pack("<QQ", len(docs), len(docs) + 1)
           + struct.pack(f"<{len(docs)}i", *lengths) + struct.pack(f"<{len(docs)}q", *pointers)
           + struct.pack(f"<{len(docs) + 1}q", *range(len(docs) + 1)))
    return bin_, idx


def read_megatron(bin_: bytes, idx: bytes) -> list[list[int]]:
    assert idx[:9] == b"MMIDIDX\x00\x00"
    version, code, seqs, ndocs = struct.unpack_from("<QBQQ", idx, 9)
    assert version == 1 and ndocs == seqs + 1
    fmt, size = {8: ("H", 2), 4: ("i", 4)}[code]
    off = 34
    lengths = struct.unpack_from(f"<{seqs}i", idx, off)
    pointers = struct.unpack_from(f"<{seqs}q", idx, off + 4 * seqs)
    indices = struct.unpack_from(f"<{ndocs}q", idx, off + 12 * seqs)
    assert len(idx) == off + 12 * seqs + 8 * ndocs and list(indices) == list(range(ndocs))
    assert len(bin_) == sum(lengths) * size
    return [list(struct.unpack_from(f"<{n}{fmt}", bin_, p)) for n, p in zip(lengths, pointers)]


def ref_npy(tokens, wide: bool) -> bytes:
    import numpy as np
    buf = io.BytesIO()
    np.save(buf, np.array(tokens, dtype="<u4" if wide else "<u2"))
    return buf.getvalue()


def shard_files(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith("shard_"))


def cli(*args, **kw):
    r = subprocess.run([sys.executable, "-m", "anytok", *map(str, args)], capture_output=True, text=True, **kw)
    return r.returncode, r.stdout, r.stderr


# ---- tests ----

@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return _write_inputs(tmp_path_factory.mktemp("in"))


@pytest.mark.parametrize("fmt,name,shard", [("llmc", "gpt2", 30_000), ("megatron", "cl100k_base", 25_000),
                                            ("npy", "o200k_base", 40_000)])
def test_cli_jobs_1_and_2_match_reference(tmp_path, inputs, fmt, name, shard):
    ref = tiktoken_encoding(name)
    eot = ref._special_tokens["<|endoftext|>"]
    per_doc = ref_stream(DOCS, ref.encode_ordinary, eot, before=fmt == "llmc")
    outs = {}
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        code, _, err = cli("tokenize", *inputs, "-o", out, "--format", fmt, "-e", name, "--jobs", jobs,
                           "--shard-tokens", shard, "-q")
        assert code == 0, err
        outs[jobs] = {n: (out / n).read_bytes() for n in shard_files(out)}
    assert outs[1] == outs[2]
    got = outs[1]
    wide = ref.n_vocab > 65536
    if fmt == "llmc":
        shards = cut_exact(per_doc, shard)
        assert list(got) == [f"shard_{i:06d}.bin" for i in range(len(shards))]
        for i, toks in enumerate(shards):
            assert got[f"shard_{i:06d}.bin"] == ref_llmc(toks, wide)
            assert read_llmc(got[f"shard_{i:06d}.bin"]) == toks
    elif fmt == "megatron":
        shards = cut_at_documents(per_doc, shard)
        assert len(got) == 2 * len(shards)
        code_ = 4 if ref.n_vocab >= 65500 else 8
        for i, docs in enumerate(shards):
            b, x = got[f"shard_{i:06d}.bin"], got[f"shard_{i:06d}.idx"]
            assert (b, x) == ref_megatron(docs, code_)
            assert read_megatron(b, x) == docs
    else:
        import numpy as np
        shards = cut_exact(per_doc, shard)
        assert len(got) == len(shards)
        for i, toks in enumerate(shards):
            data = got[f"shard_{i:06d}.npy"]
            assert data == ref_npy(toks, wide)
            arr = np.load(io.BytesIO(data))
            assert arr.dtype == (np.uint32 if wide else np.uint16) and arr.tolist() == toks
    manifest = json.loads((tmp_path / "j1" / "manifest.json").read_text())
    assert manifest["complete"] and manifest["summary"]["documents"] == len(DOCS)
    assert manifest["summary"]["tokens"] == sum(map(len, per_doc))


def test_api_eot_options_and_dtype(tmp_path, inputs):
    ref = tiktoken_encoding("gpt2")
    docs = DOCS
    # No delimiter, npy, one shard.
    s = datasets.tokenize(inputs, tmp_path / "a", "npy", encoding="gpt2", eot=None, jobs=1)
    flat = [t for d in ref_stream(docs, ref.encode_ordinary, None, False) for t in d]
    assert s["shards"] == 1 and s["dtype"] == "uint16"
    assert (tmp_path / "a" / "shard_000000.npy").read_bytes() == ref_npy(flat, False)
    # A delimiter by id, after each document; uint32 forced.
    s = datasets.tokenize(inputs, tmp_path / "b", "npy", encoding="gpt2", eot="198", dtype="uint32", jobs=1)
    flat = [t for d in ref_stream(docs, ref.encode_ordinary, 198, False) for t in d]
    assert (tmp_path / "b" / "shard_000000.npy").read_bytes() == ref_npy(flat, True)
    # A delimiter by its text, llmc, uint32 header (Llama 3 style).
    s = datasets.tokenize(inputs, tmp_path / "c", "llmc", encoding="gpt2", eot="<|endoftext|>", dtype="uint32")
    flat = [t for d in ref_stream(docs, ref.encode_ordinary, 50256, True) for t in d]
    assert (tmp_path / "c" / "shard_000000.bin").read_bytes() == ref_llmc(flat, True)
    # The delimiter after each document in llm.c's layout.
    s = datasets.tokenize(inputs, tmp_path / "d", "llmc", encoding="gpt2", eot_position="after", jobs=1)
    flat = [t for d in ref_stream(docs, ref.encode_ordinary, 50256, False) for t in d]
    assert (tmp_path / "d" / "shard_000000.bin").read_bytes() == ref_llmc(flat, False)


def test_forced_dtype_too_small_is_an_error(tmp_path, inputs):
    code, _, err = cli("tokenize", *inputs, "-o", tmp_path / "o", "--format", "llmc", "-e", "o200k_base",
                       "--dtype", "uint16")
    assert code == 1 and "uint16" in err and "200,019" in err
    assert not (tmp_path / "o").exists() or shard_files(tmp_path / "o") == []
    code, _, err = cli("tokenize", *inputs, "-o", tmp_path / "d", "--format", "llmc", "--engine", "dask")
    assert code == 2 and "--engine dask needs --scheduler ADDRESS" in err
    code, _, err = cli("tokenize", *inputs, "-o", tmp_path / "d", "--format", "llmc", "--scheduler", "tcp://x:1")
    assert code == 2 and "--scheduler goes with --engine dask or ray" in err
    with pytest.raises(datasets.DatasetError, match="megatron writes uint16 or int32"):
        datasets.tokenize(inputs, tmp_path / "p", "megatron", encoding="gpt2", dtype="uint32")
    with pytest.raises(datasets.DatasetError, match="no token"):
        datasets.tokenize(inputs, tmp_path / "q", "npy", encoding="gpt2", eot="<|im_end|>")


def test_tokenizer_json_over_65535_ids_gets_uint32(tmp_path):
    import hf_support

    path = hf_support.model_path("llama3")
    hf = hf_support.hf_tokenizer("llama3")
    docs = DOCS[:40]
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "d.jsonl").write_text("".join(json.dumps({"body": d}) + "\n" for d in docs), encoding="utf-8")
    code, _, err = cli("tokenize", folder, "-o", tmp_path / "o", "--format", "llmc", "--vocab", path,
                       "--field", "body", "--eot", "<|begin_of_text|>", "-j", "2", "-q")
    assert code == 0, err
    per_doc = ref_stream(docs, lambda d: hf.encode(d, add_special_tokens=False).ids, 128000, True)
    flat = [t for d in per_doc for t in d]
    data = (tmp_path / "o" / "shard_000000.bin").read_bytes()
    assert data == ref_llmc(flat, True) and max(read_llmc(data)) > 65535
    code, _, err = cli("tokenize", folder, "-o", tmp_path / "p", "--format", "npy", "--vocab", path,
                       "--field", "body", "--eot", "128001", "--dtype", "uint16", "-q")
    assert code == 1 and "128,256" in err


def _run_until_killed(args, manifest_path, min_shards: int):
    """Start the command, SIGKILL it once `min_shards` shards are in the manifest."""
    p = subprocess.Popen([sys.executable, "-m", "anytok", *map(str, args)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and p.poll() is None:
            try:
                m = json.loads(manifest_path.read_text())
            except (OSError, ValueError):
                m = {"shards": []}
            if len(m["shards"]) >= min_shards:
                p.send_signal(signal.SIGKILL)
                break
            time.sleep(0.005)
    finally:
        p.wait()
    return p.returncode, m


def test_killed_job_resumes_to_the_same_bytes(tmp_path):
    docs = _documents(size_each=150_000, seed=2)
    inputs = _write_inputs(tmp_path / "in", docs)
    ref = tiktoken_encoding("gpt2")
    per_doc = ref_stream(docs, ref.encode_ordinary, 50256, True)
    shard = 8_000
    args = ["tokenize", *inputs, "-o", tmp_path / "o", "--format", "llmc", "-e", "gpt2", "-j", "2",
            "--shard-tokens", shard, "-q"]
    status, m = _run_until_killed(args, tmp_path / "o" / "manifest.json", 2)
    assert status == -signal.SIGKILL, "the job ended before it could be killed: give it more input"
    assert not m.get("complete")
    done = {s["files"][0]: os.stat(tmp_path / "o" / s["files"][0]).st_mtime_ns for s in m["shards"]}
    code, _, err = cli(*[a if a != "2" else "1" for a in args])  # --jobs is not part of the job
    assert code == 0, err
    shards = cut_exact(per_doc, shard)
    assert shard_files(tmp_path / "o") == [f"shard_{i:06d}.bin" for i in range(len(shards))]
    for i, toks in enumerate(shards):
        assert (tmp_path / "o" / f"shard_{i:06d}.bin").read_bytes() == ref_llmc(toks, False)
    # The shards finished before the kill were not written again.
    for name, mtime in done.items():
        assert os.stat(tmp_path / "o" / name).st_mtime_ns == mtime
    assert not [n for n in os.listdir(tmp_path / "o") if n.startswith(".anytok-tmp-")]
    # Rerun once complete: nothing to do, same files.
    assert cli(*args)[0] == 0


@pytest.mark.parametrize("fmt", ["llmc", "megatron"])
def test_resume_from_any_finished_shard(tmp_path, inputs, fmt):
    """The manifest cut back to k shards (a kill right after shard k), a half-written temporary
    file and a shard file that the manifest does not list: the rerun gives the same bytes."""
    out = tmp_path / "o"
    kw = dict(encoding="gpt2", shard_tokens=20_000, jobs=1)
    datasets.tokenize(inputs, out, fmt, **kw)
    full = {n: (out / n).read_bytes() for n in shard_files(out)}
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["shards"]) >= 4
    for k in (0, 1, len(manifest["shards"]) - 1):
        m = dict(manifest, complete=False, shards=manifest["shards"][:k])
        m.pop("summary")
        (out / "manifest.json").write_text(json.dumps(m))
        (out / ".anytok-tmp-shard_000009.bin").write_bytes(b"partial")
        datasets.tokenize(inputs, out, fmt, **kw)
        assert {n: (out / n).read_bytes() for n in shard_files(out)} == full
        assert json.loads((out / "manifest.json").read_text()) == manifest
    # A shard the manifest lists, damaged: refused, not silently rewritten.
    with open(out / "shard_000001.bin", "ab") as f:
        f.write(b"\0\0")
    m = dict(manifest, complete=False, shards=manifest["shards"][:2])
    (out / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(datasets.DatasetError, match="shard_000001.bin: listed in the manifest but missing or of"):
        datasets.tokenize(inputs, out, fmt, **kw)


def test_another_job_in_the_same_folder_is_refused(tmp_path, inputs):
    out = tmp_path / "o"
    assert cli("tokenize", *inputs, "-o", out, "--format", "npy", "-e", "gpt2", "-q")[0] == 0
    code, _, err = cli("tokenize", *inputs, "-o", out, "--format", "npy", "-e", "gpt2", "--shard-tokens", 1000)
    assert code == 1 and "another job" in err and "shard_tokens" in err
    code, _, err = cli("tokenize", inputs[0], "-o", out, "--format", "npy", "-e", "gpt2")
    assert code == 1 and "inputs" in err
    # A folder another job is writing to (it holds the lock).
    import fcntl

    with open(out / ".anytok-lock", "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        code, _, err = cli("tokenize", *inputs, "-o", out, "--format", "npy", "-e", "gpt2")
        assert code == 1 and "another anytok tokenize is writing" in err
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    code, _, err = cli("tokenize", *inputs, "-o", tmp_path / "x", "--format", "npy", "-e", "gpt2")
    assert code == 1 and "not empty" in err


def test_bad_records(tmp_path):
    ref = tiktoken_encoding("gpt2")
    lines = [
        json.dumps({"text": "good one"}).encode(),
        b'{"text": "unterminated',
        json.dumps({"body": "no text field"}).encode(),
        b"",
        json.dumps({"text": 42}).encode(),
        b'{"text": "bad \xff byte"}',
        b"[1, 2]",
        json.dumps({"text": "good two"}).encode(),
    ]
    src = tmp_path / "bad.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n")
    offset_ff = sum(len(x) + 1 for x in lines[:5]) + lines[5].index(b"\xff")
    code, _, err = cli("tokenize", src, "-o", tmp_path / "f", "--format", "npy", "-e", "gpt2")
    assert code == 1 and f"{src}: line 2: malformed JSON" in err
    assert shard_files(tmp_path / "f") == []
    code, _, err = cli("tokenize", src, "-o", tmp_path / "s", "--format", "npy", "-e", "gpt2", "--on-error", "skip")
    assert code == 0, err
    want = [f"{src}: line 2: malformed JSON", f"{src}: line 3: no field 'text'",
            f"{src}: line 5: field 'text' is a number, not a string",
            f"{src}: line 6: invalid UTF-8 at byte offset {offset_ff}", f"{src}: line 7: a JSON array, not an object"]
    summary = json.loads((tmp_path / "s" / "manifest.json").read_text())["summary"]
    assert summary["skipped"] == 5 and summary["documents"] == 2
    assert [m[:len(w)] for m, w in zip(summary["skipped_records"], want)] == want
    assert "skipped 5 bad records" in err and "line 6" in err
    flat = [t for d in ref_stream(["good one", "good two"], ref.encode_ordinary, 50256, False) for t in d]
    assert (tmp_path / "s" / "shard_000000.npy").read_bytes() == ref_npy(flat, False)
    code, _, err = cli("tokenize", src, "-o", tmp_path / "r", "--format", "npy", "-e", "gpt2", "--on-error", "skip",
                       "--decode-errors", "replace")
    assert code == 0, err
    texts = ["good one", b"bad \xff byte".decode("utf-8", "replace"), "good two"]
    flat = [t for d in ref_stream(texts, ref.encode_ordinary, 50256, False) for t in d]
    assert (tmp_path / "r" / "shard_000000.npy").read_bytes() == ref_npy(flat, False)
    # The input fixed, the same folder: nothing was finished, the job starts over.
    good = tmp_path / "good.jsonl"
    good.write_text('{"text": "good one"}\n')
    src.write_bytes(good.read_bytes())
    code, _, err = cli("tokenize", src, "-o", tmp_path / "f", "--format", "npy", "-e", "gpt2")
    assert code == 0, err
    flat = [t for d in ref_stream(["good one"], ref.encode_ordinary, 50256, False) for t in d]
    assert (tmp_path / "f" / "shard_000000.npy").read_bytes() == ref_npy(flat, False)
    # A byte order mark opening a .jsonl file is not part of its first record.
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + json.dumps({"text": "good one"}).encode() + b"\n")
    s = datasets.tokenize([tmp_path / "bom.jsonl"], tmp_path / "bom", "npy", encoding="gpt2", jobs=1)
    assert (tmp_path / "bom" / "shard_000000.npy").read_bytes() == ref_npy(flat, False)
    # A .txt file that is not UTF-8: its byte offset.
    (tmp_path / "t.txt").write_bytes(b"abc\ndef\x80")
    code, _, err = cli("tokenize", tmp_path / "t.txt", "-o", tmp_path / "t", "--format", "llmc", "-e", "gpt2")
    assert code == 1 and "t.txt: invalid UTF-8 at byte offset 7" in err


def test_zstd_and_parquet_inputs(tmp_path):
    import zstandard
    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = DOCS[:60]
    ref = tiktoken_encoding("gpt2")
    raw = "".join(json.dumps({"text": d}) + "\n" for d in docs[:30]).encode()
    (tmp_path / "a.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(raw))
    pq.write_table(pa.table({"text": docs[30:], "n": list(range(30))}), tmp_path / "b.parquet", row_group_size=7)
    out = tmp_path / "o"
    s = datasets.tokenize([tmp_path / "a.jsonl.zst", tmp_path / "b.parquet"], out, "llmc", encoding="gpt2",
                          jobs=2, batch_bytes=2000)
    flat = [t for d in ref_stream(docs, ref.encode_ordinary, 50256, True) for t in d]
    assert s["documents"] == 60 and (out / "shard_000000.bin").read_bytes() == ref_llmc(flat, False)
    # A null in a parquet column is a bad record with its row.
    pq.write_table(pa.table({"text": ["x", None, "y"]}), tmp_path / "c.parquet")
    with pytest.raises(datasets.DatasetError, match=r"c.parquet: row 2: field 'text' is null"):
        datasets.tokenize([tmp_path / "c.parquet"], tmp_path / "p", "npy", encoding="gpt2")


def test_count_field(tmp_path, inputs):
    ref = tiktoken_encoding("cl100k_base")
    half = len(DOCS) // 2
    want_a = sum(len(ref.encode_ordinary(d)) for d in DOCS[:half])
    want_b = sum(len(ref.encode_ordinary(d)) for d in DOCS[half:3 * len(DOCS) // 4])
    code, out, err = cli("count", inputs[0], inputs[1], "--field", "text", "-e", "cl100k_base", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [f["tokens"] for f in doc["files"]] == [want_a, want_b]
    assert doc["total"]["tokens"] == want_a + want_b
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"body": DOCS[:half]}), tmp_path / "a.parquet", row_group_size=50)
    code, out, err = cli("count", tmp_path / "a.parquet", "--field", "body", "-e", "cl100k_base")
    assert code == 0 and int(out) == want_a, err
    (tmp_path / "bad.jsonl").write_text('{"text": "a"}\n{"txt": "b"}\n')
    code, out, err = cli("count", tmp_path / "bad.jsonl", "--field", "text")
    assert code == 1 and "line 2: no field 'text'" in err


def test_progress_on_a_terminal_only(tmp_path, inputs):
    """The live line (documents/s, MB/s, tokens/s) on a terminal, erased before the summary;
    nothing but the summary on a pipe."""
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "anytok", "tokenize", *inputs, "-o", tmp_path / "o", "--format",
                          "npy", "-e", "gpt2", "-j", "1"], stdout=subprocess.DEVNULL, stderr=slave,
                         stdin=subprocess.DEVNULL)
    os.close(slave)
    got = drain_pty(master)
    p.wait()
    os.close(master)
    tty = got.decode()
    assert p.returncode == 0
    live, _, summary = tty.rpartition("\r\x1b[K")
    assert "docs/s" in live and "tokens/s" in live and re.search(r"\d [KMG]?B/s", live)  # (KB/s on a slow machine)
    n_files = 2 + len(DOCS) - 3 * len(DOCS) // 4  # a.jsonl, b.jsonl.gz and the .txt files
    assert summary.startswith(f"{tmp_path / 'o'}: 1 shard, ")
    assert f"{len(DOCS)} documents from {n_files} files" in summary
    code, _, err = cli("tokenize", *inputs, "-o", tmp_path / "p", "--format", "npy", "-e", "gpt2", "-j", "1")
    assert code == 0 and "\r" not in err and err.startswith(f"{tmp_path / 'p'}: 1 shard, ")


def test_progress_line():
    from anytok.cli.tokenize import LiveLine

    buf = io.StringIO()
    live = LiveLine(True, buf)
    live({"documents": 10, "bytes": 2_000_000, "tokens": 500_000, "disk_bytes": 1_000_000, "total_bytes": 4_000_000,
          "seconds": 1.0})
    live.last = 0
    live({"documents": 20, "bytes": 4_000_000, "tokens": 1_000_000, "disk_bytes": 2_000_000,
          "total_bytes": 4_000_000, "seconds": 2.0})
    line = buf.getvalue().split("\r\x1b[K")[-1]
    assert line == "20 docs · 10 docs/s · 2.0 MB/s · 500k tokens/s · ETA 2s"
    live.close()
    assert buf.getvalue().endswith("\r\x1b[K")


def test_missing_optional_modules_name_the_extra(tmp_path, monkeypatch):
    import zstandard

    (tmp_path / "a.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(b'{"text": "x"}\n'))
    (tmp_path / "b.parquet").write_bytes(b"PAR1")
    for name in ("zstandard", "compression", "compression.zstd", "pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails
    with pytest.raises(datasets.InputError, match=r"zstd\) or the zstandard package: pip install 'anytok\[zstd\]'"):
        datasets.tokenize([tmp_path / "a.jsonl.zst"], tmp_path / "o", "npy", encoding="gpt2", jobs=1)
    with pytest.raises(datasets.InputError, match=r"needs pyarrow: pip install 'anytok\[parquet\]'"):
        datasets.tokenize([tmp_path / "b.parquet"], tmp_path / "p", "npy", encoding="gpt2", jobs=1)
    # The core imports none of them.
    code = ("import sys, anytok, anytok.datasets, anytok.cli.tokenize; "
            "print(sorted(m for m in ('pyarrow', 'zstandard', 'dask', 'ray', 'numpy') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


def test_word_counts_for_training(tmp_path, inputs):
    """Training's word counts by the same machinery: the pieces of every document (`regex`
    splitting each document with the pattern, as tiktoken does), and the vocabulary trained from
    them is the one trained from the documents."""
    import regex

    import anytok

    pat = tiktoken_encoding("cl100k_base")._pat_str
    want = collections.Counter(p for d in DOCS for p in regex.findall(pat, d))
    got = datasets.word_counts(inputs, pattern="cl100k_base", style="tiktoken", jobs=2, batch_bytes=20_000)
    assert got == want
    few = _write_inputs(tmp_path / "few", DOCS[:24])
    wc = datasets.word_counts(few, pattern="o200k_base", style="hf", jobs=1)
    a = anytok.train(word_counts=wc, vocab_size=300, style="hf", pattern="o200k_base")
    b = anytok.train(texts=DOCS[:24], vocab_size=300, style="hf", pattern="o200k_base")
    assert a.merges == b.merges and len(a.merges) == 300 - 256
    (tmp_path / "bad.jsonl").write_text('{"text": "a"}\n{"text": null}\n')
    with pytest.raises(datasets.DatasetError, match="line 2: field 'text' is null"):
        datasets.word_counts([tmp_path / "bad.jsonl"], jobs=1)
    skipped = []
    assert datasets.word_counts([tmp_path / "bad.jsonl"], jobs=1, on_error="skip", skipped=skipped) == {"a": 1}
    assert len(skipped) == 1 and "line 2" in skipped[0]
