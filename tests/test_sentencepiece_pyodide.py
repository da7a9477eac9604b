"""SentencePiece models and the Precompiled normalizer give the same results in Pyodide's CPython
3.14 (npm `pyodide`, web/node_modules, run by Node without a browser) as natively.

The float32 Viterbi of Unigram, the charsmap trie and the grapheme tables must not depend on
the interpreter; this runs the very same source files in both and compares every id.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

from conftest import FULL  # noqa: E402
from fetch_sentencepiece_models import fetch as fetch_models  # noqa: E402

PYODIDE = ROOT / "web" / "node_modules" / "pyodide"
MODELS = ["test_model.model", "test_ja_model.model", "tokenizer.model.v1",
          "mistral_instruct_tokenizer_240323.model.v3"]

RUNNER = """
import base64, json, sys
sys.path.insert(0, "/work/pkg")
from anytok.sentencepiece.model_file import load_sentencepiece_model
from anytok.sentencepiece import precompiled
out = {"version": sys.version_info[:2]}
texts = json.load(open("/work/texts.json"))
for name in json.load(open("/work/models.json")):
    tok = load_sentencepiece_model(open("/work/models/" + name, "rb").read())
    ids = [tok.encode(t) for t in texts]
    out[name] = ids
    out[name + ":decode"] = [tok.decode(i) for i in ids]
    if tok.normalizer_spec.precompiled_charsmap:
        p = precompiled.PrecompiledNormalizer(tok.normalizer_spec.precompiled_charsmap)
        out[name + ":precompiled"] = [p.normalize(t) for t in texts]
json.dump(out, open("/work/out.json", "w"))
"""

NODE_SCRIPT = """
import { loadPyodide } from "%(pyodide)s/pyodide.mjs";
import fs from "fs";
const [pkg, models, texts, runner, outPath, ...names] = process.argv.slice(2);
const py = await loadPyodide({ indexURL: "%(pyodide)s/" });
function copyTree(src, dst) {
  py.FS.mkdirTree(dst);
  for (const e of fs.readdirSync(src, { withFileTypes: true })) {
    if (e.name === "__pycache__") continue;
    if (e.isDirectory()) copyTree(src + "/" + e.name, dst + "/" + e.name);
    else if (e.name.endsWith(".py")) py.FS.writeFile(dst + "/" + e.name, fs.readFileSync(src + "/" + e.name));
  }
}
copyTree(pkg, "/work/pkg/anytok");
py.FS.mkdirTree("/work/models");
for (const m of names) py.FS.writeFile("/work/models/" + m, fs.readFileSync(models + "/" + m));
py.FS.writeFile("/work/models.json", JSON.stringify(names));
py.FS.writeFile("/work/texts.json", fs.readFileSync(texts));
py.runPython(fs.readFileSync(runner, "utf8"));
fs.writeFileSync(outPath, py.FS.readFile("/work/out.json"));
"""


def _texts(corpora) -> list[str]:
    # The default run takes a quarter of the text; ANYTOK_FULL=1 all of it.
    k = 1 if FULL else 4
    cps = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    texts = [corpora[name][:40000 // k] for name in ("en", "code", "zh", "ja")]
    texts += ["".join(cps[::5 * k]), " ".join(cps[1::9 * k]), "x".join(c + "\u0301" for c in cps[::29 * k]),
              "e\u0301\r\nＡ\u0301 \u1100\u1161\u11a8 👍🏽 🇯🇵 \u0915\u094d\u0937 ﬁ\u0301 ｶﾞ  \t x"]
    return texts


def _run_native(texts: list[str], models: Path) -> dict:
    from anytok.sentencepiece.model_file import load_sentencepiece_model
    from anytok.sentencepiece import precompiled

    out: dict = {}
    for name in MODELS:
        tok = load_sentencepiece_model((models / name).read_bytes())
        ids = [tok.encode(t) for t in texts]
        out[name] = ids
        out[name + ":decode"] = [tok.decode(i) for i in ids]
        if tok.normalizer_spec.precompiled_charsmap:
            p = precompiled.PrecompiledNormalizer(tok.normalizer_spec.precompiled_charsmap)
            out[name + ":precompiled"] = [p.normalize(t) for t in texts]
    return out


def test_pyodide_gives_native_results(corpora, tmp_path):
    if not (PYODIDE / "pyodide.mjs").exists():
        pytest.fail(f"{PYODIDE} is missing: run build_scripts/build_web.py (npm ci in web/)")
    node = shutil.which("node")
    assert node, "node is needed (the test setup installs npm, which brings it)"
    models = fetch_models()
    texts = _texts(corpora)
    (tmp_path / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    (tmp_path / "runner.py").write_text(RUNNER, encoding="utf-8")
    script = tmp_path / "run.mjs"
    script.write_text(NODE_SCRIPT % {"pyodide": PYODIDE.as_posix()}, encoding="utf-8")
    subprocess.run([node, str(script), str(ROOT / "pkg" / "anytok"), str(models), str(tmp_path / "texts.json"),
                    str(tmp_path / "runner.py"), str(tmp_path / "out.json"), *MODELS],
                   check=True, timeout=600, capture_output=True)
    got = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert tuple(got.pop("version")) >= (3, 14)
    expected = _run_native(texts, models)
    assert got.keys() == expected.keys()
    for key in expected:
        assert got[key] == expected[key], key
