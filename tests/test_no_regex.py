"""anytok runs on the standard library alone: never imports `regex`, same ids without it.

anytok does not use the `regex` package even when it is installed (stdlib `re` with the pinned
tables is exact and faster), so "with regex" and "without regex" are the same code path; these
tests prove that it stays so.
"""

from __future__ import annotations

import json
import subprocess
import sys

import anytok
from conftest import CORPORA, CORPORA_DIR, ROOT, anytok_encoding

SCRIPT = r"""
import json, sys
before = set(sys.modules)
BLOCK = sys.argv[1] == "block"
if BLOCK:
    sys.modules["regex"] = None  # any `import regex` now raises ImportError
import anytok
texts = json.loads(sys.stdin.read())
out = {}


def appended_counts(tok, t):
    app = tok.appender()
    return [app.append(t[k:k + 97]) for k in range(0, len(t), 97)]


for name in anytok.list_encoding_names():
    enc = anytok.get_encoding(name)
    out[name] = [enc.encode(t, disallowed_special=()) for t in texts]
    # The incremental operations, on the same path.
    t = texts[0][:3000] + texts[2][:1000]
    iv = enc.intervals(t)
    out[name + " incremental"] = [appended_counts(enc, t), [iv.count(a, a + 777) for a in range(0, 3000, 250)],
                                  enc.count_till_limit(t, 500), [len(c) for c in enc.chunks(t, 100)]]
# Other formats: a tokenizer.json run as an Encoding (llama3), pipelines, a SentencePiece model
# (which refuses lone surrogates, as sentencepiece does: the last text is left out).
for path in json.loads(sys.argv[2]):
    tok = anytok.load(path)
    t = texts[0][:2000] + texts[2][:500]
    out[path] = [[tok.encode(x[:5000]) for x in texts[:-1]], appended_counts(tok, t),
                 [len(c) for c in tok.chunks(t, 100)]]
assert "regex" not in sys.modules or sys.modules["regex"] is None, "anytok imported regex"
stdlib = set(sys.stdlib_module_names)
foreign = sorted(m for m in set(sys.modules) - before
                 if m.split(".")[0] not in stdlib and m.split(".")[0] != "anytok" and sys.modules[m] is not None
                 and not m.startswith("__editable__"))
print(json.dumps({"ids": out, "foreign": foreign}))
"""


def _model_files() -> list[str]:
    import fetch_models
    from fetch_sentencepiece_models import fetch as fetch_sentencepiece_models

    return [str(fetch_models.path(f"{name}.tokenizer.json")) for name in ("llama3", "gemma3", "minilm")] + [
        str(fetch_sentencepiece_models() / "mistral_instruct_tokenizer_240323.model.v3")]


def run(mode: str, texts: list[str]) -> dict:
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, json.dumps(_model_files())], input=json.dumps(texts),
        capture_output=True, text=True, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_same_ids_without_regex_and_no_foreign_imports():
    texts = [(CORPORA_DIR / name).read_text(encoding="utf-8")[:20000] for name in CORPORA.values()]
    texts += ["<|endoftext|> 😀 \U00020000 é e\u0301 ١٢٣ 'LL", "\ud800 lone \udfff"]
    blocked = run("block", texts)
    free = run("free", texts)
    assert blocked["ids"] == free["ids"]
    # Only the standard library is imported at run time (modules the interpreter loaded at
    # start-up, e.g. by .pth files, do not count).
    assert blocked["foreign"] == [] and free["foreign"] == []
    # And in this process (where tiktoken and regex are installed) the ids are the same too.
    for name, ids in free["ids"].items():
        if name.endswith(" incremental") or name not in anytok.list_encoding_names():
            continue
        enc = anytok_encoding(name)
        assert [enc.encode(t, disallowed_special=()) for t in texts] == ids
