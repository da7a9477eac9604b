"""pytest plugin for running tiktoken's own tests against anytok (tests/test_tiktoken_suite.py).

Loaded with `-p anytok_shim_guard`: it fails the run unless `import tiktoken` gives the shim
(anytok), turns off network access (anytok bundles its vocabularies, nothing may be
downloaded) and hypothesis's example database (nothing is written beside the tests).
"""

from __future__ import annotations

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


def pytest_report_header(config) -> str:
    import tiktoken

    return f"tiktoken: anytok shim at {tiktoken.__file__}"
