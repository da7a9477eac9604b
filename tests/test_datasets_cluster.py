"""`anytok tokenize --engine dask|ray` on local clusters (a Dask LocalCluster of 2 worker
processes on 127.0.0.1, a local Ray of 2 CPUs without dashboard): the same bytes as the local
engine and as the reference written with tiktoken."""

from __future__ import annotations

import os

import pytest

from conftest import tiktoken_encoding
from test_datasets import DOCS, cli, cut_at_documents, cut_exact, ref_llmc, ref_megatron, ref_stream, shard_files, \
    _write_inputs

import anytok.datasets as datasets


def _files(folder) -> dict:
    return {n: (folder / n).read_bytes() for n in shard_files(folder)}


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """Inputs and their local run (llmc, gpt2, jobs 1), checked against the reference."""
    root = tmp_path_factory.mktemp("cluster")
    inputs = _write_inputs(root / "in", DOCS[:120])
    out = root / "local"
    datasets.tokenize(inputs, out, "llmc", encoding="gpt2", shard_tokens=9_000, jobs=1)
    ref = tiktoken_encoding("gpt2")
    shards = cut_exact(ref_stream(DOCS[:120], ref.encode_ordinary, 50256, True), 9_000)
    local = _files(out)
    assert local == {f"shard_{i:06d}.bin": ref_llmc(s, False) for i, s in enumerate(shards)}
    return inputs, local


def test_dask_local_cluster(tmp_path, job):
    from dask.distributed import Client, LocalCluster

    inputs, local = job
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        # The command line with the scheduler's address ...
        code, _, err = cli("tokenize", *inputs, "-o", tmp_path / "cli", "--format", "llmc", "-e", "gpt2",
                           "--engine", "dask", "--scheduler", cluster.scheduler_address, "--shard-tokens", 9_000, "-q")
        assert code == 0, err
        assert _files(tmp_path / "cli") == local
        # ... and the API with a client, small batches so both workers get many.
        datasets.tokenize(inputs, tmp_path / "api", "llmc", encoding="gpt2", shard_tokens=9_000, engine="dask",
                          client=client, batch_bytes=4096)
        assert _files(tmp_path / "api") == local
        # Training's word counts through Dask: those of the local engine.
        assert datasets.word_counts(inputs, engine="dask", client=client, batch_bytes=4096) == \
            datasets.word_counts(inputs, jobs=1)
        # Megatron through Dask against its reference.
        ref = tiktoken_encoding("cl100k_base")
        datasets.tokenize(inputs, tmp_path / "meg", "megatron", encoding="cl100k_base", shard_tokens=20_000,
                          engine="dask", client=client, batch_bytes=4096)
        docs = cut_at_documents(ref_stream(DOCS[:120], ref.encode_ordinary, 100257, False), 20_000)
        got = _files(tmp_path / "meg")
        assert got == {n: b for i, d in enumerate(docs)
                       for n, b in zip((f"shard_{i:06d}.bin", f"shard_{i:06d}.idx"), ref_megatron(d, 4))}


def test_ray_local(tmp_path, job):
    import ray

    inputs, local = job
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    try:
        datasets.tokenize(inputs, tmp_path / "api", "llmc", encoding="gpt2", shard_tokens=9_000, engine="ray",
                          batch_bytes=4096)
        assert _files(tmp_path / "api") == local
    finally:
        ray.shutdown()
