"""pytest plugin for running tiktoken's own tests against anytok (tests/test_tiktoken_suite.py).

Loaded with `-p anytok_shim_guard`: it fails the run unless `import tiktoken` gives the shim
(anytok), turns off network access (anytok bundles its vocabularies, nothing may be
downloaded) and hypothesis's example database (nothing is written beside the tests).

It also keeps Hypothesis from drawing examples from anytok's own string constants.  Hypothesis
mines the constants of "local" modules (not installed in site-packages) and offers them as
examples; in tiktoken's CI tiktoken is installed, so its constants are never drawn, but anytok
here runs from a source checkout, and a drawn '<|endoftext|>' makes `test_hyp_roundtrip` fail
for anytok as it would for tiktoken (its `encode` refuses special-token text by default).
"""

from __future__ import annotations

import os
import socket


def _no_network(*args, **kwargs):
    raise OSError("network access is blocked while tiktoken's tests run against anytok")


def pytest_configure(config) -> None:
    import anytok
    import tiktoken

    if getattr(tiktoken, "__anytok_shim__", False) is not True or tiktoken.Encoding is not anytok.Encoding:
        raise RuntimeError(f"`import tiktoken` did not give the anytok shim but {tiktoken.__file__}")
    socket.socket.connect = _no_network  # type: ignore[method-assign]
    socket.socket.connect_ex = _no_network  # type: ignore[method-assign]
    socket.create_connection = _no_network  # type: ignore[assignment]
    socket.getaddrinfo = _no_network  # type: ignore[assignment]

    import hypothesis

    hypothesis.settings.register_profile("anytok_shim", database=None)
    hypothesis.settings.load_profile("anytok_shim")
    _anytok_not_local(os.path.dirname(anytok.__file__) + os.sep)


def _anytok_not_local(package_dir: str) -> None:
    """anytok's files count as installed, not local, for Hypothesis's constant mining (see the
    module docstring); a Hypothesis without that mining has nothing to change."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return
    is_local = getattr(providers, "is_local_module_file", None)
    if is_local is None:
        return
    providers.is_local_module_file = lambda path: not path.startswith(package_dir) and is_local(path)


def pytest_report_header(config) -> str:
    import tiktoken

    return f"tiktoken: anytok shim at {tiktoken.__file__}"
