"""Where batches are tokenized: this process, a local process pool, a Dask or a Ray cluster.

An engine is anything with `submit(batch) -> handle` (the handle has `result()`), `slots`
(how many batches to keep in flight: memory stays bounded by that many batches) and
`close()`; it runs `fn(tok, settings, batch)` (`work.tokenize_batch`, or `work.count_batch`
for training's word counts).  The coordinator submits batches in input order and takes the results back in the
same order, so the output never depends on the engine or on the number of workers.  Dask and
Ray are imported only when asked for (extras `anytok[dask]`, `anytok[ray]`); the tokenizer is
sent to their workers once (pickled: a bundled encoding travels as its name).
"""

from __future__ import annotations

import os

from .work import tokenize_batch

ENGINES = ("local", "dask", "ray")


def cpu_count() -> int:
    """The CPUs this process may use (the CLI's count has the same rule)."""
    if hasattr(os, "process_cpu_count"):
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class _Async:
    def __init__(self, handle):
        self.handle = handle

    def result(self):
        return self.handle.get()


# The function, tokenizer and settings of a local pool's workers (inherited through fork, or
# set by _init_local in a spawned worker).
_LOCAL: tuple | None = None


def _init_local(fn, tok, settings) -> None:
    global _LOCAL
    if _LOCAL is None:
        _LOCAL = (fn, tok, settings)


def _local_task(batch):
    fn, tok, settings = _LOCAL
    return fn(tok, settings, batch)


class LocalEngine:
    """`jobs` == 1: batches are tokenized here, one at a time; else a pool of processes (fork
    where the platform has it, as `anytok count` does, so the tokenizer is not loaded again)."""

    def __init__(self, tok, settings, jobs: int, fn=tokenize_batch):
        global _LOCAL
        self.fn, self.tok, self.settings, self.jobs = fn, tok, settings, max(1, jobs)
        self.pool = None
        self.slots = 1 if self.jobs == 1 else 2 * self.jobs
        if self.jobs > 1:
            import multiprocessing

            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
            _LOCAL = (fn, tok, settings)
            try:
                self.pool = ctx.Pool(self.jobs, _init_local, (fn, tok, settings))
            finally:
                _LOCAL = None

    def submit(self, batch):
        if self.pool is None:
            return _Done(self.fn(self.tok, self.settings, batch))
        return _Async(self.pool.apply_async(_local_task, (batch,)))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool.join()
            self.pool = None

    def abort(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


class DaskEngine:
    """A Dask distributed cluster: a `dask.distributed.Client`, or the scheduler's address."""

    def __init__(self, tok, settings, scheduler=None, client=None, fn=tokenize_batch):
        try:
            from dask.distributed import Client
        except ImportError:
            raise ImportError("--engine dask needs dask distributed: pip install 'anytok[dask]'") from None
        self.own = client is None
        if client is None:
            if not scheduler:
                raise ValueError("--engine dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.1:8786)")
            client = Client(scheduler)
        self.client = client
        workers = client.scheduler_info().get("workers", {})
        threads = sum(w.get("nthreads", 1) for w in workers.values()) or 1
        self.slots = 2 * threads
        self.tok_ref = client.scatter(tok, broadcast=True)
        self.settings = settings
        self.fn = fn

    def submit(self, batch):
        return self.client.submit(self.fn, self.tok_ref, self.settings, batch, pure=False)

    def close(self) -> None:
        if self.own:
            self.client.close()

    abort = close


class _RayHandle:
    def __init__(self, ray, ref):
        self.ray, self.ref = ray, ref

    def result(self):
        return self.ray.get(self.ref)


class RayEngine:
    """Ray: the cluster `ray.init(address=...)` finds (--scheduler ADDRESS, or RAY_ADDRESS), or a
    local one started for the job if Ray is not initialised yet."""

    def __init__(self, tok, settings, address=None, fn=tokenize_batch):
        try:
            import ray
        except ImportError:
            raise ImportError("--engine ray needs ray: pip install 'anytok[ray]'") from None
        self.ray = ray
        self.own = not ray.is_initialized()
        if self.own:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        self.slots = 2 * cpus
        self.tok_ref = ray.put(tok)
        self.settings = settings
        self.remote = ray.remote(num_cpus=1)(fn)

    def submit(self, batch):
        return _RayHandle(self.ray, self.remote.remote(self.tok_ref, self.settings, batch))

    def close(self) -> None:
        if self.own:
            self.ray.shutdown()

    abort = close


def make_engine(engine, tok, settings, jobs: int | None, scheduler=None, client=None, fn=tokenize_batch):
    if engine is None or engine == "local":
        return LocalEngine(tok, settings, jobs if jobs and jobs > 0 else cpu_count(), fn=fn)
    if engine == "dask":
        return DaskEngine(tok, settings, scheduler=scheduler, client=client, fn=fn)
    if engine == "ray":
        return RayEngine(tok, settings, address=scheduler, fn=fn)
    if hasattr(engine, "submit"):
        return engine
    raise ValueError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
