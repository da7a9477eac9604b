"""anytok in a real browser: the shim, the worker, the demo page, against native anytok.

Runs Debian's Chromium (headless) through Playwright against the real demo server
(`build_scripts/serve_demo.py`).  Every request that would leave 127.0.0.1 is aborted and
fails the test that made it.  All of these tests run in one pytest worker (xdist group
"browser"): a Pyodide boot costs seconds, and one browser is shared by all of them.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from browser_support import JS_LOAD, ROOT, evaluate_json, new_context, wait_status
from browser_support import browser, demo_url  # noqa: F401 (module fixtures: a Chromium, the demo server)
from conftest import ALL_ENCODINGS, anytok_encoding, tiktoken_encoding

from anytok import format as vocab_format

pytestmark = pytest.mark.xdist_group("browser")

SAMPLE_CHARS = 12_000


# --- fixtures -------------------------------------------------------------------------------

@pytest.fixture
def context(browser):
    ctx, guard = new_context(browser, viewport={"width": 1360, "height": 1000})
    ctx.guard = guard
    yield ctx
    ctx.close()
    guard.check()


@pytest.fixture(scope="module")
def demo_profile(browser):
    """One browser profile for the module's demo pages.  Each test has a page of its own; the
    start-up snapshot and the vocabulary the first page keeps in Cache Storage serve the later
    ones, which start faster than in a fresh profile (what a fresh profile fetches and stores is
    tested with `context`).  Also the demo-page tests of test_browser_offsets.py."""
    ctx, guard = new_context(browser, viewport={"width": 1360, "height": 1000})
    ctx.guard = guard
    yield ctx
    ctx.close()
    guard.check()


@pytest.fixture
def demo(demo_profile, demo_url):
    """The demo page, loaded and ready."""
    page = demo_profile.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(demo_url)
    wait_status(page)
    yield page
    page.close()
    assert errors == []


@pytest.fixture
def profile_page(demo_profile):
    """A new page of demo_profile, not loaded (for tests that open the demo at another address:
    they do not depend on a first visit, which `context` gives)."""
    page = demo_profile.new_page()
    yield page
    page.close()
    demo_profile.guard.check()


@pytest.fixture(scope="module")
def shim(browser, demo_url):
    """A page with the shim imported (window.AnyTok) and no demo running, shared by the module."""
    ctx, guard = new_context(browser)
    page = ctx.new_page()
    page.goto(demo_url + "anytok-assets.json")
    page.evaluate("async () => { window.AnyTok = (await import('/anytok.js')).AnyTok; }")
    page.guard = guard
    yield page
    ctx.close()
    guard.check()


def load(page, name: str) -> str:
    return page.evaluate(JS_LOAD, [name])


def samples(corpora: dict[str, str]) -> dict[str, str]:
    """Slices of each corpus: its start, two inner parts and its end."""
    out = {}
    for key, text in corpora.items():
        n = len(text)
        for start in (0, n // 3, 2 * n // 3, n - SAMPLE_CHARS):
            out[f"{key}@{start}"] = text[start : start + SAMPLE_CHARS]
    return out


# --- build and server (no browser) ------------------------------------------------------------

def test_slim_wheel_has_the_package_and_no_vocabularies():
    import build_web

    name, data = build_web.slim_wheel()
    assert name.endswith("-py3-none-any.whl")
    assert build_web.slim_wheel() == (name, data), "the wheel is not reproducible"
    zf = zipfile.ZipFile(io.BytesIO(data))
    names = set(zf.namelist())
    assert not [n for n in names if n.endswith(".atok")]
    package = {"anytok/" + p.relative_to(ROOT / "pkg" / "anytok").as_posix()
               for p in (ROOT / "pkg" / "anytok").rglob("*.py") if "__pycache__" not in p.parts}
    assert package <= names
    record = zf.read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
    for line in record.splitlines():
        path, digest, size = line.rsplit(",", 2)
        if digest:
            blob = zf.read(path)
            assert int(size) == len(blob)
            assert digest == build_web._record_hash(blob), path


def test_server_serves_the_right_types(demo_url):
    manifest = json.loads(urllib.request.urlopen(demo_url + "anytok-assets.json").read())
    expected = {
        "": "text/html",
        "anytok.js": "text/javascript",
        "anytok.d.ts": "text/plain",
        "worker.js": "text/javascript",
        "pyodide/pyodide.mjs": "text/javascript",
        "pyodide/pyodide.asm.wasm": "application/wasm",
        manifest["wheelURL"]: "application/octet-stream",
        manifest["encodings"]["o200k_base"]["url"]: "application/octet-stream",
    }
    for path, mime in expected.items():
        with urllib.request.urlopen(demo_url + path) as r:
            assert r.headers["Content-Type"].split(";")[0] == mime, path
    assert manifest["pyodide"] == json.loads((ROOT / "web" / "package.json").read_text())["dependencies"]["pyodide"]
    vocab = (ROOT / "vocab_binaries" / "o200k_base.atok").read_bytes()
    assert manifest["encodings"]["o200k_base"]["sha256"] == hashlib.sha256(vocab).hexdigest()


def test_typescript_declarations_type_check():
    # web/types_check.ts uses the whole API as documented, and misuses it where marked
    # @ts-expect-error: both must hold for anytok.d.ts.
    web = ROOT / "web"
    result = subprocess.run(
        [str(web / "node_modules" / ".bin" / "tsc"), "--noEmit", "--strict", "--target", "es2022", "--module", "esnext",
         "--moduleResolution", "bundler", "--lib", "es2022,dom", "types_check.ts"],
        cwd=web, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- the shim: identity with native anytok --------------------------------------------------

@pytest.mark.parametrize("name", ALL_ENCODINGS)
def test_page_ids_equal_native_anytok(shim, corpora, name):
    texts = samples(corpora)
    load(shim, name)
    got = evaluate_json(
        shim,
        """async ([name, texts]) => {
            const tok = window.toks[name];
            const out = {};
            for (const [label, text] of Object.entries(texts)) {
                const ids = await tok.encode(text);
                const pieces = await tok.tokenize(text);
                out[label] = {
                    ids,
                    count: await tok.count(text),
                    decoded: (await tok.decode(ids)) === text,
                    piecesJoin: pieces.map((p) => p.text).join("") === text,
                    piecesIds: pieces.flatMap((p) => p.ids).join(",") === ids.join(","),
                };
            }
            out.batch = await tok.countBatch(Object.values(texts));
            return out;
        }""",
        [name, texts],
    )
    enc = anytok_encoding(name)
    for label, text in texts.items():
        expected = enc.encode(text)
        r = got[label]
        assert r["ids"] == expected, f"{name} {label}: ids differ"
        assert r["count"] == len(expected)
        assert r["decoded"] and r["piecesJoin"] and r["piecesIds"], (name, label, r)
    assert got["batch"] == [len(enc.encode(t)) for t in texts.values()]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_harmony", "gpt2"])
def test_special_tokens_and_python_errors_reach_js(shim, name):
    enc = anytok_encoding(name)
    special = sorted(enc.special_tokens_set)[0]
    text = f"hello {special} world <|endoftext|>"
    load(shim, name)
    got = shim.evaluate(
        """async ([name, text]) => {
            const tok = window.toks[name];
            const out = {
                all: await tok.encode(text, { allowedSpecial: "all" }),
                plain: await tok.encode(text, { disallowedSpecial: [] }),
                specialTokens: tok.specialTokens,
            };
            try { await tok.encode(text); out.refused = null; }
            catch (e) { out.refused = [e.name, e.pythonType, e.message]; }
            try { await tok.decode([tok.maxTokenValue + 1]); out.badId = null; }
            catch (e) { out.badId = [e.pythonType, e.message]; }
            return out;
        }""",
        [name, text],
    )
    assert got["all"] == enc.encode(text, allowed_special="all")
    assert got["plain"] == enc.encode(text, disallowed_special=())
    assert got["specialTokens"] == sorted(enc.special_tokens_set)
    with pytest.raises(ValueError, match="allowed_special") as native:
        enc.encode(text)
    # The same refusal, in the JS API's words (allowedSpecial, not Python's allowed_special).
    token = re.search(r"disallowed special token '(.*?)'", str(native.value)).group(1)
    assert got["refused"] == ["AnyTokError", "ValueError",
                              f"Encountered text corresponding to disallowed special token {json.dumps(token)}. Pass "
                              f"{{ allowedSpecial: [{json.dumps(token)}] }} (or \"all\") to encode it as that special "
                              "token, or { disallowedSpecial: [] } to encode it as plain text."]
    assert got["badId"][0] == "KeyError" and str(enc.max_token_value + 1) in got["badId"][1]


def test_lone_surrogates_are_encoded_as_native_anytok_does(shim):
    # Python strings may hold lone surrogates, as JavaScript strings may; anytok (like
    # tiktoken) reads each as U+FFFD and joins a proper pair into its character.
    cases = {
        "lone-high": ("a\ud800b", r"a\ud800b"),
        "lone-low": ("\udc00", r"\udc00"),
        "pair": ("x\ud83d\ude00y", r"x\ud83d\ude00y"),
        "reversed": ("\ude00\ud83d", r"\ude00\ud83d"),
        "trailing-high": ("end\ud83d", r"end\ud83d"),
    }
    load(shim, "o200k_base")
    js = "{" + ",".join(f'"{k}": "{v[1]}"' for k, v in cases.items()) + "}"
    got = shim.evaluate(
        f"""async () => {{
            const tok = window.toks.o200k_base;
            const cases = {js};
            const out = {{}};
            for (const [k, text] of Object.entries(cases)) out[k] = await tok.encode(text);
            return out;
        }}"""
    )
    enc = anytok_encoding("o200k_base")
    for key, (text, _) in cases.items():
        assert got[key] == enc.encode(text), key
    assert got["lone-high"] == enc.encode("a\ufffdb")


@pytest.mark.parametrize("name", ["o200k_base", "gpt2"])
def test_decode_of_invalid_utf8_and_a_bom_equals_native(shim, name):
    # The worker decodes a tiktoken-style encoding's bytes with TextDecoder: its replacement of
    # invalid UTF-8 must be Python's "replace", byte for byte, and a leading BOM must stay.
    import random

    enc = anytok_encoding(name)
    single = [enc.encode_single_token(bytes([b])) for b in range(256)]
    rng = random.Random(20261125)
    words = enc.encode("héllo wörld 日本語 ÿ 😀 \ufeff text")
    cases = [enc.encode("\ufeffBOM first"), enc.encode("\ufeff"), single[0xEF:0xF0] + single[0xBB:0xBC] + single[0xBF:0xC0]]
    for _ in range(300):
        cases.append([rng.choice(single[0x80:]) if rng.random() < 0.6 else rng.choice(single + words)
                      for _ in range(rng.randint(1, 12))])
    load(shim, name)
    got = evaluate_json(
        shim,
        """async ([name, cases, lone]) => {
            const tok = window.toks[name];
            const out = [];
            for (const ids of cases) out.push(await tok.decode(ids));
            let strict;
            try { await tok.decode([lone], { errors: "strict" }); strict = null; } catch (e) { strict = e.pythonType; }
            return { out, strict };
        }""",
        [name, cases, single[0x80]],
    )
    assert got["out"][0].startswith("\ufeff")
    for ids, text in zip(cases, got["out"]):
        assert text == enc.decode(ids), ids
    assert got["strict"] == "UnicodeDecodeError"


# decode of a tiktoken-style encoding runs in the page, from a table of every token's bytes the
# worker sends once; these tests hold it to native anytok's decode and the worker path's errors.

@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_page_decode_of_the_corpora_equals_native(shim, corpora, name):
    # Each whole corpus, and slices of its ids cut anywhere (in Chinese and Japanese most cuts
    # split a character: U+FFFD at the ends, as Python's "replace").
    import random

    enc = anytok_encoding(name)
    ids = {key: enc.encode(text, disallowed_special=()) for key, text in corpora.items()}
    rng = random.Random(name)
    cuts = {key: sorted((a, a + rng.randint(1, 40)) for a in (rng.randrange(len(v)) for _ in range(200)))
            for key, v in ids.items()}
    load(shim, name)
    got = evaluate_json(
        shim,
        """async ([name, ids, cuts]) => {
            const tok = window.toks[name];
            const out = {};
            for (const [key, list] of Object.entries(ids)) {
                out[key] = { whole: await tok.decode(list), typed: await tok.decode(Int32Array.from(list)), cuts: [] };
                for (const [a, b] of cuts[key]) out[key].cuts.push(await tok.decode(list.slice(a, b)));
            }
            return out;
        }""",
        [name, ids, cuts],
    )
    for key, text in corpora.items():
        assert got[key]["whole"] == enc.decode(ids[key]) == text, key
        assert got[key]["typed"] == text, key
        expected = [enc.decode(ids[key][a:b]) for a, b in cuts[key]]
        assert got[key]["cuts"] == expected, key
    assert any("\ufffd" in t for t in got["zh"]["cuts"])  # characters were split


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_harmony"])
def test_page_decode_of_every_token_and_random_ids_equals_native(shim, name):
    # Every id alone (special tokens too), every id in one call backwards, and random sequences
    # of any ids, lone continuation bytes and BOMs, against native decode.
    import random

    enc = anytok_encoding(name)
    table = enc._decoder
    valid = [i for i, b in enumerate(table) if b is not None]
    specials = sorted(enc.encode_single_token(s) for s in enc.special_tokens_set)
    single = [enc.encode_single_token(bytes([b])) for b in range(256)]
    bom = enc.encode("\ufeff")
    rng = random.Random(name)
    cases = [bom + enc.encode("text after a BOM"), bom + bom, specials, [specials[0], *bom, specials[-1]]]
    pools = [valid, specials, single[0x80:], single[0xC0:], valid + single[0x80:] * 50]
    for _ in range(300):
        pool = rng.choice(pools)
        cases.append([rng.choice(pool) for _ in range(rng.randint(0, 30))])
    load(shim, name)
    got = evaluate_json(
        shim,
        """async ([name, n, cases]) => {
            const tok = window.toks[name];
            const each = [];
            for (let id = 0; id < n; id++) {
                try { each.push(await tok.decode([id])); } catch (e) { each.push(null); }
            }
            const all = [];
            for (let id = n - 1; id >= 0; id--) if (each[id] !== null) all.push(id);
            const out = [];
            for (const ids of cases) out.push(await tok.decode(ids));
            return { each, backwards: await tok.decode(all), out };
        }""",
        [name, enc.n_vocab, cases],
    )
    assert got["each"] == [enc.decode([i]) if b is not None else None for i, b in enumerate(table)]
    assert got["backwards"] == enc.decode(valid[::-1])
    for ids, text in zip(cases, got["out"]):
        assert text == enc.decode(ids), ids
    assert got["out"][0].startswith("\ufeff") and got["out"][1] == "\ufeff\ufeff"


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_page_decode_errors_equal_the_worker_paths(shim, name):
    # An id past the vocabulary or in one of its holes: the KeyError Python's decode raises in
    # the worker (errors: "strict" still decodes there), for the first bad id; a value that is
    # no id: a TypeError before any of that.
    enc = anytok_encoding(name)
    hole = enc._decoder.index(None)
    n = enc.n_vocab
    cases = [[n], [2**31 - 1], [hole], [1, 2, hole, n], [1, n, hole], [n + 5, 3],
             [1, -1], [n, 1.5], ["3"], [None], [2**31]]
    load(shim, name)
    got = shim.evaluate(
        """async ([name, cases]) => {
            const tok = window.toks[name];
            await tok.decode([1]); // the table is made
            const attempt = async (ids, options) => {
                try { return ["ok", await tok.decode(ids, options)]; }
                catch (e) { return [e.name, e.pythonType ?? null, e.message, e.constructor.name]; }
            };
            const out = [];
            for (const ids of cases) out.push([await attempt(ids), await attempt(ids, { errors: "strict" })]);
            return out;
        }""",
        [name, cases],
    )
    for ids, (page, worker) in zip(cases, got):
        assert page == worker, ids
        bad = next((i for i in ids if not isinstance(i, int) or not 0 <= i < 2**31), None)
        if bad is not None or ids == [None]:
            assert page[0] == "TypeError", ids
            continue
        with pytest.raises(KeyError) as native:
            enc.decode(ids)
        assert page == ["AnyTokError", "KeyError", str(native.value), "AnyTokError"], ids


def test_page_decodes_encodings_itself_and_other_tokenizers_in_the_worker(shim, corpora):
    # Which side decodes shows in the order of answers: with a count queued in the worker first, a decode in the page answers before it, one in the worker after it.
    # A tokenizer.json whose decoder is not byte-level (MiniLM's WordPiece) decodes in the
    # worker, as native anytok does.
    minilm = native_tokenizer("minilm.tokenizer.json")
    serve_files(shim, {"minilm.tokenizer.json": model_file("minilm.tokenizer.json").read_bytes()})
    texts = file_samples(corpora)
    load(shim, "o200k_base")
    got = shim.evaluate(
        """async ([texts, long]) => {
            const o200k = window.toks.o200k_base;
            const minilm = await AnyTok.load({ url: "/test-models/minilm.tokenizer.json" });
            const order = async (tok) => {
                const ids = await tok.encode("hello world");
                await tok.decode(ids);
                const seen = [];
                // countBatch posts its request at once (encode awaits before it does).
                await Promise.all([tok.countBatch([long]).then(() => seen.push("count")),
                                   tok.decode(ids).then(() => seen.push("decode"))]);
                return seen;
            };
            const out = { kind: minilm.kind, o200k: await order(o200k), minilm: await order(minilm), decoded: {} };
            for (const [label, text] of Object.entries(texts)) {
                const ids = await minilm.encode(text, { addSpecialTokens: true });
                out.decoded[label] = [ids, await minilm.decode(ids)];
            }
            return out;
        }""",
        [texts, corpora["en"][:20_000]],
    )
    assert got["kind"] == "hf"
    assert got["o200k"] == ["decode", "count"]
    assert got["minilm"] == ["count", "decode"]
    for label, text in texts.items():
        ids, decoded = got["decoded"][label]
        assert ids == minilm.encode(text, add_special_tokens=True), label
        assert decoded == minilm.decode(ids), label


JS_CONSTRAIN_WALK = """async ([key, kind, spec, tokens]) => {
    const tok = window.toks[key];
    const m = await tok.constrain({ [kind]: spec });
    const steps = [];
    for (const t of tokens) {
        const mask = await m.mask();
        steps.push({ mask: Array.from(mask), allowed: (await m.allowed()).length, forced: await m.forced(),
                     ok: await m.consume(t) });
    }
    const end = { accepting: await m.isAccepting(), stopped: await m.isStopped(), mask: Array.from(await m.mask()) };
    const left = await m.rollback(2);
    const back = Array.from(await m.mask());
    await m.free();
    let freed;
    try { await m.mask(); freed = null; } catch (e) { freed = e.message; }
    return { steps, end, left, back, freed };
}"""


def check_page_constrain_walk(page, key, tok, kind, spec, steps=12):
    """A seeded walk of native anytok.constrain's matcher (tokens other than EOS), replayed by
    `window.toks[key].constrain` in the worker: every mask, allowed count, forced tokens and the
    end states equal native ones, rollback and free included."""
    import random

    from anytok import constrain
    from anytok.constrain.tokens import TokenTrie

    build = {"regex": constrain.regex, "jsonSchema": constrain.json_schema, "grammar": constrain.grammar,
             "gbnf": constrain.gbnf}
    eos = TokenTrie.of(tok).eos
    rng = random.Random(f"{key}|{kind}")
    native = build[kind](spec).matcher(tok)
    tokens = []
    for _ in range(steps):
        allowed = [t for t in native.allowed() if t != eos]
        if not allowed:
            break
        tokens.append(rng.choice(allowed))
        native.consume(tokens[-1])
    assert len(tokens) >= 3, (key, kind)
    got = evaluate_json(page, JS_CONSTRAIN_WALK, [key, kind, spec, tokens])
    ref = build[kind](spec).matcher(tok)
    for t, step in zip(tokens, got["steps"]):
        words = list(memoryview(ref.mask()).cast("I"))
        assert step["mask"] == words and step["allowed"] == len(ref.allowed()) and step["forced"] == ref.forced(), (key, kind)
        assert step["ok"] and ref.consume(t)
    assert got["end"] == {"accepting": ref.is_accepting(), "stopped": ref.is_stopped(),
                          "mask": list(memoryview(ref.mask()).cast("I"))}, (key, kind)
    ref.rollback(2)
    assert got["left"] == len(tokens) - 2 and got["back"] == list(memoryview(ref.mask()).cast("I"))
    assert "freed" in got["freed"]


CONSTRAIN_SCHEMA = json.dumps({"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                               "n": {"type": "integer", "minimum": 0, "maximum": 99}},
                               "required": ["name", "n"], "additionalProperties": False})


def test_constrain_in_the_page_equals_native_masks(shim):
    # tok.constrain in the worker (Pyodide's Python 3.14) gives native anytok.constrain's masks,
    # which tests/test_constrain*.py hold equal to llguidance's, at every step of a walk; and a
    # bad constraint rejects with the Python error.
    load(shim, "o200k_base")
    enc = anytok_encoding("o200k_base")
    specs = [
        ("regex", "(yes|no), [0-9]{1,3}!"),
        ("jsonSchema", CONSTRAIN_SCHEMA),
        ("grammar", 'start: "(" item ("," item)* ")"\nitem: /[a-z]{1,4}/ | NUMBER\n%import common.NUMBER'),
        # llama.cpp's chess grammar (build_scripts/fetch/fetch_llama_cpp.py): the Earley parser under Pyodide
        ("gbnf", (Path(__file__).resolve().parent.parent / ".cache/llama_cpp/grammars/chess.gbnf").read_text()),
        # special tokens (compiled per tokenizer) and a hidden stop
        ("grammar", 'start: /[a-z ]{1,8}/ <|endofprompt|> foo "!"\nfoo[stop="."]: /[a-z]+/\n'),
        # end-of-sequence as a stop (EOS in the masks mid-grammar) and a token budget
        ("grammar", 'start: foo "!" bar\nfoo[stop=""]: /[a-z]+/\nbar[max_tokens=2]: /[0-9]+/\n'),
    ]
    for kind, spec in specs:
        check_page_constrain_walk(shim, "o200k_base", enc, kind, spec)
    errors = shim.evaluate(
        """async () => {
            const out = {};
            for (const [k, spec] of [["regex", { regex: "(" }], ["schema", { jsonSchema: { type: "object", not: {} } }],
                                     ["both", { regex: "a", grammar: "start: A" }]]) {
                try { await window.toks.o200k_base.constrain(spec); out[k] = null; } catch (e) { out[k] = [e.name, e.pythonType]; }
            }
            return out;
        }"""
    )
    assert errors["regex"] == ["AnyTokError", "RegexSyntaxError"]
    assert errors["schema"] == ["AnyTokError", "UnsupportedFeatureError"]
    assert errors["both"][0] == "TypeError"


JS_CONSTRAIN_DIGESTS = """async ([key, walks]) => {
    // For each walk: every mask's sha256 (hex), forced tokens, accepting, consume's answer.
    const hex = async (words) => Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", words)))
        .map((b) => b.toString(16).padStart(2, "0")).join("");
    const out = [];
    for (const [kind, spec, tokens] of walks) {
        const m = await window.toks[key].constrain({ [kind]: spec });
        const steps = [];
        for (const t of [...tokens, null]) {
            const step = { mask: await hex(await m.mask()), forced: await m.forced(),
                           accepting: await m.isAccepting(), stopped: await m.isStopped() };
            if (t !== null) step.ok = await m.consume(t);
            steps.push(step);
        }
        await m.free();
        out.push(steps);
    }
    return out;
}"""


def test_reference_grammars_in_the_page_equal_llguidance(shim):
    # The walks of tests/test_constrain_grammar.py under Pyodide: llama.cpp's 8 GBNF grammars
    # (`{ gbnf }`) and outlines' 2 Lark grammars (`{ grammar }`), seeded 40-step walks on
    # o200k_base picked from llguidance 1.9.1's masks; in the page's worker, every mask (by
    # sha256), forced tokens, accepting and stopped state equal llguidance's and native anytok's.
    import random

    from llguidance import LLMatcher
    from llguidance.gbnf_to_lark import gbnf_to_lark
    from test_constrain import _lltokenizer, _ref_mask

    from anytok import constrain

    cache = ROOT / ".cache" / "llama_cpp"
    grammars = [("gbnf", (cache / "grammars" / f"{n}.gbnf").read_text()) for n in
                ("arithmetic", "c", "chess", "english", "japanese", "json", "json_arr", "list")]
    grammars += [("grammar", (cache / "outlines" / f"{n}.lark").read_text()) for n in ("arithmetic", "json")]
    load(shim, "o200k_base")
    enc = anytok_encoding("o200k_base")
    lltok = _lltokenizer("o200k_base")
    walks, expected = [], []
    for kind, text in grammars:
        lark_text = gbnf_to_lark(text) if kind == "gbnf" else text
        ref = LLMatcher(lltok, LLMatcher.grammar_from_lark(lark_text), log_level=0)
        ours = (constrain.gbnf if kind == "gbnf" else constrain.grammar)(text).matcher(enc)
        rng = random.Random(f"browser|{kind}|{text[:40]}")
        tokens, steps = [], []
        for i in range(41):
            mask = _ref_mask("o200k_base", ref)
            assert ours.mask() == mask, (kind, text[:40], i)
            steps.append({"mask": hashlib.sha256(mask).hexdigest(), "forced": ref.compute_ff_tokens(),
                          "accepting": ref.is_accepting(), "stopped": ref.is_stopped()})
            allowed = [t for t in ours.allowed() if t != lltok.eos_token]
            if i == 40 or not allowed:
                break
            t = rng.choice(allowed)
            tokens.append(t)
            steps[-1]["ok"] = True
            assert ours.consume(t) and ref.consume_token(t), (kind, text[:40], i)
        assert len(tokens) >= 10, (kind, text[:40])
        walks.append([kind, text, tokens])
        expected.append(steps)
    got = shim.evaluate(JS_CONSTRAIN_DIGESTS, ["o200k_base", walks])
    for (kind, text, _), ours, ref in zip(walks, got, expected):
        assert ours == ref, (kind, text[:40])


def test_optional_python_methods_are_exposed_when_present(shim):
    import anytok

    load(shim, "o200k_base")
    got = shim.evaluate(
        """async () => {
            const tok = window.toks.o200k_base;
            const text = "one two three four five six seven eight nine ten";
            const out = { has: [typeof tok.countTillLimit, typeof tok.chunks, typeof tok.splitByTokens] };
            if (tok.countTillLimit) out.tillLimit = [await tok.countTillLimit(text, 100), await tok.countTillLimit(text, 3)];
            if (tok.chunks) out.chunks = await tok.chunks(text, 4);
            if (tok.splitByTokens) out.split = await tok.splitByTokens(text, 4);
            return out;
        }"""
    )
    enc = anytok_encoding("o200k_base")
    text = "one two three four five six seven eight nine ten"
    native = [hasattr(anytok.Encoding, m) for m in ("count_till_limit", "chunks", "split_by_tokens")]
    assert [t == "function" for t in got["has"]] == native
    if native[0]:
        assert got["tillLimit"] == [enc.count_till_limit(text, 100), enc.count_till_limit(text, 3)]
    if native[1]:
        assert got["chunks"] == enc.chunks(text, 4)
    if native[2]:
        assert got["split"] == list(enc.split_by_tokens(text, 4))


def test_one_worker_serves_many_encodings_with_queued_requests(shim):
    wasm_before = sum("pyodide.asm.wasm" in u for u in shim.guard.requests)
    texts = ["hello world", "naïve café", "日本語のテキスト", "def f(x):\n    return x\n"] * 5
    names = ["r50k_base", "cl100k_base", "o200k_base"]
    for name in names:
        load(shim, name)
    got = shim.evaluate(
        """async ([names, texts]) => {
            // All at once: the worker queues them, answers come back to the right caller.
            const jobs = [];
            for (const text of texts) for (const name of names) jobs.push(window.toks[name].encode(text));
            return Promise.all(jobs);
        }""",
        [names, texts],
    )
    expected = [anytok_encoding(n).encode(t) for t in texts for n in names]
    assert got == expected
    assert sum("pyodide.asm.wasm" in u for u in shim.guard.requests) == wasm_before <= 1


def test_page_stays_responsive_during_a_1mb_encode(shim, corpora):
    text = corpora["ja"]
    assert len(text.encode()) > 1_000_000
    load(shim, "o200k_base")
    got = evaluate_json(
        shim,
        """async ([text]) => {
            const tok = window.toks.o200k_base;
            let frames = 0, ticks = 0, running = true, maxGap = 0, last = performance.now();
            const frame = () => { frames++; if (running) requestAnimationFrame(frame); };
            requestAnimationFrame(frame);
            const timer = setInterval(() => {
                const now = performance.now();
                maxGap = Math.max(maxGap, now - last);
                last = now;
                ticks++;
            }, 10);
            const start = performance.now();
            const ids = await tok.encode(text);
            const elapsed = performance.now() - start;
            running = false;
            clearInterval(timer);
            return { frames, ticks, maxGap, elapsed, ids };
        }""",
        [text],
    )
    assert got["ids"] == anytok_encoding("o200k_base").encode(text)
    elapsed = got["elapsed"]
    summary = {k: v for k, v in got.items() if k != "ids"}
    # Were the encode on the main thread, neither timers nor frames would run until it ended.
    assert got["ticks"] >= elapsed / 10 / 4, summary
    assert got["frames"] >= 3, summary
    assert got["maxGap"] < max(250, elapsed / 3), summary


def test_two_workers_share_long_texts_with_one_workers_ids(shim, corpora):
    """load({ workers: 2 }): long texts cut in two, encoded or counted at once and joined, give
    tiktoken's ids; where they cannot be shared (a piece across the cut longer than the
    overlap, special-token text, allowedSpecial) one worker does it, with the same result."""
    ref = tiktoken_encoding("o200k_base")
    en, ja, zh = corpora["en"], corpora["ja"], corpora["zh"]
    texts = {
        "mixed": en[:200_000] + ja[:100_000] + zh[:100_000],
        "pair at the cut": en[:150_000] + "\U0001F600" + en[150_000:300_000],  # the cut falls inside the pair
        "run across the cut": en[:100_000] + "a" * 100_000 + en[100_000:200_000],
        "special": en[:150_000] + "<|endoftext|>" + en[150_000:300_000],
    }
    got = evaluate_json(
        shim,
        """async ([texts]) => {
            const { AnyTok } = await import('/anytok.js');
            const tok = await AnyTok.load({ encoding: "o200k_base", workers: 2 });
            const out = { workers: tok.workers, results: {} };
            const shared = async (f) => { const before = tok._sharedCalls(); const value = await f(); return [value, tok._sharedCalls() - before]; };
            for (const [name, text] of Object.entries(texts)) {
                const r = {};
                try { r.encode = await shared(() => tok.encode(text)); } catch (e) { r.encodeError = e.message; }
                try { r.count = await shared(() => tok.count(text)); } catch (e) { r.countError = e.message; }
                r.asText = await shared(() => tok.encode(text, { disallowedSpecial: [] }));
                r.allowed = await shared(() => tok.encode(text, { allowedSpecial: "all" }));
                out.results[name] = r;
            }
            const segments = [];
            for (let i = 0; i < texts.mixed.length; i += 20000) segments.push(texts.mixed.slice(i, i + 20000));
            out.batch = await shared(() => tok.countBatch(segments));
            out.decoded = await tok.decode(out.results.mixed.asText[0]);
            out.segments = segments;
            const one = await AnyTok.load({ encoding: "o200k_base" });
            out.oneWorker = one.workers;
            return out;
        }""",
        [texts],
    )
    assert got["workers"] == 2 and got["oneWorker"] == 1
    for name, text in texts.items():
        r = got["results"][name]
        as_text = ref.encode(text, disallowed_special=())
        assert r["asText"] == [as_text, 1 if name != "run across the cut" else 0], name
        assert r["allowed"] == [ref.encode(text, allowed_special="all"), 0], name
        if name == "special":
            assert "<|endoftext|>" in r["encodeError"] and "<|endoftext|>" in r["countError"]
        else:
            shared = 0 if name == "run across the cut" else 1
            assert r["encode"] == [as_text, shared] and r["count"] == [len(as_text), shared], name
    assert got["batch"] == [[len(ref.encode_ordinary(t)) for t in got["segments"]], 1]
    assert got["decoded"] == texts["mixed"]


def test_an_extra_worker_that_cannot_start_is_left_out(browser, demo_url, corpora):
    # load({ workers: 2 }) when the second worker cannot start (its download of anytok's wheel
    # fails): a warning, one worker, the same ids; the start-up snapshot is kept; once the
    # download works again, the next load gets both workers.
    text = corpora["en"][:300_000]
    expected = anytok_encoding("o200k_base").encode(text)
    ctx, guard = new_context(browser)
    try:
        page = ctx.new_page()
        page.goto(demo_url + "anytok-assets.json")
        load(page, "o200k_base")  # the first worker is up
        warnings = []
        page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
        page.route("**/*.whl*", lambda route: route.fulfill(status=503, body=b"unavailable"))
        script = """async ([text]) => {
            const tok = await AnyTok.load({ encoding: "o200k_base", workers: 2 });
            const snapshots = await (await caches.open("anytok-start-v2")).keys();
            return { workers: tok.workers, ids: await tok.encode(text), count: await tok.count(text), snapshots: snapshots.length };
        }"""
        degraded = evaluate_json(page, script, [text])
        page.unroute("**/*.whl*")
        both = evaluate_json(page, script, [text])
    finally:
        ctx.close()
    guard.check()
    assert degraded["workers"] == 1 and both["workers"] == 2
    assert degraded["ids"] == both["ids"] == expected
    assert degraded["count"] == both["count"] == len(expected)
    assert degraded["snapshots"] == both["snapshots"] == 1
    assert any("extra worker 1 of 1 left out" in w and "503" in w for w in warnings), warnings
    assert not any("snapshot could not be restored" in w for w in warnings), warnings


def in_fresh_page(browser, demo_url, script: str):
    """`script` evaluated in a page of a fresh context on the demo's origin, with the network
    guard checked; its JS may set `window.onManifest`, awaited when anytok.js has fetched its
    manifest (before the fetch resolves)."""
    ctx, guard = new_context(browser)
    try:
        page = ctx.new_page()
        page.goto(demo_url + "anytok-assets.json")
        page.evaluate("""() => {
            const baseFetch = window.fetch;
            window.fetch = async (url, init) => {
                const response = await baseFetch(url, init);
                if (String(url).includes("anytok-assets.json")) await window.onManifest?.();
                return response;
            };
        }""")
        got = page.evaluate(script)
    finally:
        ctx.close()
    guard.check()
    return got


def test_load_starts_its_worker_while_the_manifest_is_fetched(browser, demo_url):
    # AnyTok.load starts its worker before the manifest has come (the worker's module loads
    # meanwhile) and hands it to the tokenizer; a second load finds the running worker; a load
    # that fails before it has made its worker's Runtime terminates the worker it started.
    got = in_fresh_page(browser, demo_url, """async () => {
        const log = [];
        const Base = window.Worker;
        window.Worker = class extends Base {
            constructor(url, options) { super(url, options); const u = new URL(url); log.push("worker " + u.pathname + u.search); }
            terminate() { log.push("terminated"); super.terminate(); }
        };
        window.onManifest = () => log.push("manifest");
        const { AnyTok } = await import('/anytok.js');
        const o200k = await AnyTok.load({ encoding: "o200k_base" });
        const cl100k = await AnyTok.load({ encoding: "cl100k_base" });
        let error = null;
        try {
            await AnyTok.load({ encoding: "o300k_base", workerURL: "/worker.js?other" });
        } catch (err) {
            error = err.message;
        }
        return { log, counts: [await o200k.count("hello world"), await cl100k.count("hello world")], error };
    }""")
    assert got["log"] == ["worker /worker.js", "manifest", "worker /worker.js?other", "terminated"], got["log"]
    assert got["counts"] == [len(anytok_encoding("o200k_base").encode("hello world")),
                             len(anytok_encoding("cl100k_base").encode("hello world"))]
    assert 'unknown encoding "o300k_base"' in got["error"]


def test_a_worker_that_fails_before_the_manifest_comes_rejects_the_load(browser, demo_url):
    # The worker `load` starts early fails (its script is missing) while the manifest is held
    # back a second: the load is rejected, naming the worker, instead of waiting for ever.
    got = in_fresh_page(browser, demo_url, """async () => {
        window.onManifest = () => new Promise((r) => setTimeout(r, 1000));
        const { AnyTok } = await import('/anytok.js');
        const load = AnyTok.load({ encoding: "o200k_base", workerURL: "/no-such-worker.js" })
            .then(() => "loaded", (err) => `${err.name}: ${err.message}`);
        const timeout = new Promise((r) => setTimeout(() => r("no answer in 20 s"), 20000));
        return await Promise.race([load, timeout]);
    }""")
    assert got.startswith("AnyTokError: anytok worker ") and "/no-such-worker.js failed" in got, got


def test_shim_load_errors_are_clear(shim):
    got = shim.evaluate(
        """async () => {
            const out = {};
            const attempt = async (key, f) => {
                try { await f(); out[key] = null; } catch (e) { out[key] = [e.name, e.pythonType, e.message]; }
            };
            await attempt("missing", () => AnyTok.load({}));
            await attempt("unknown", () => AnyTok.load({ encoding: "o300k_base" }));
            await attempt("garbage", () => AnyTok.load({ vocab: new Uint8Array(64).fill(7) }));
            await attempt("notText", () => window.toks.o200k_base.count(42));
            return out;
        }"""
    )
    assert got["missing"][0] == "AnyTokError" and "no encoding given" in got["missing"][2]
    assert 'unknown encoding "o300k_base"' in got["unknown"][2] and "o200k_base" in got["unknown"][2]
    assert got["garbage"][1] == "VocabFormatError" and "not an anytok vocab file" in got["garbage"][2]
    assert got["notText"][0] == "TypeError"


def test_fast_start_runs_compiled_python_and_gives_the_stock_boots_ids(browser, demo_url, corpora):
    # The default boot runs the standard library and anytok from the .pyc build_web.py compiled
    # under Pyodide; `stdlibURL: null` boots the stock standard library (compiling from source).
    # Both give native anytok's ids; a standard library that cannot be fetched is named.
    texts = samples(corpora)
    ctx, guard = new_context(browser)
    try:
        page = ctx.new_page()
        page.goto(demo_url + "anytok-assets.json")
        got = evaluate_json(
            page,
            """async ([texts]) => {
                const { AnyTok } = await import('/anytok.js');
                const out = {};
                const kinds = [["fast", { snapshot: false }], ["stock", { stdlibURL: null, snapshot: false }],
                               ["ownGlue", { glueURL: "/worker_glue.py", snapshot: false }]];
                for (const [kind, extra] of kinds) {
                    const tok = await AnyTok.load({ encoding: "o200k_base", ...extra });
                    const ids = {};
                    for (const [label, text] of Object.entries(texts)) ids[label] = await tok.encode(text);
                    out[kind] = { compiled: tok.runtimeInfo.compiled, ids };
                }
                try {
                    await AnyTok.load({ encoding: "o200k_base", stdlibURL: "/pyodide/no-such-stdlib.zip", snapshot: false });
                    out.missing = null;
                } catch (e) {
                    out.missing = e.message;
                }
                return out;
            }""",
            [texts],
        )
    finally:
        ctx.close()
    guard.check()
    assert got["fast"]["compiled"] == {"stdlib": True, "anytok": True, "glue": True}
    assert got["stock"]["compiled"] == {"stdlib": False, "anytok": True, "glue": True}
    # A page's own glue is compiled from its own source, never replaced by the manifest's .pyc.
    assert got["ownGlue"]["compiled"] == {"stdlib": True, "anytok": True, "glue": False}
    enc = anytok_encoding("o200k_base")
    for label, text in texts.items():
        expected = enc.encode(text)
        assert got["fast"]["ids"][label] == got["stock"]["ids"][label] == got["ownGlue"]["ids"][label] == expected, label
    assert "standard library" in got["missing"] and "no-such-stdlib.zip" in got["missing"] and "404" in got["missing"]


def test_start_up_snapshot_is_made_restored_and_replaced_when_damaged(browser, demo_url, corpora, tmp_path):
    # First start: a snapshot is made (and stored in Cache Storage); the next page of the
    # profile restores it; a damaged one falls back to a normal start and is replaced; with
    # `snapshot: false` none is used.  The ids are native anytok's every time.  The first
    # page's constraint builds o200k_base's token trie and keeps it in Cache Storage (native
    # anytok's trie file, byte for byte); every later page reads it from there.
    texts = samples(corpora)
    script = """async ([texts, options, stored]) => {
        const { AnyTok } = await import('/anytok.js');
        const tok = await AnyTok.load({ encoding: "o200k_base", ...options });
        const ids = {};
        for (const [label, text] of Object.entries(texts)) ids[label] = await tok.encode(text);
        // A module no snapshot holds (anytok.constrain): after a restore, Python's first look
        // for it has anytok's files unpacked.
        const m = await tok.constrain({ regex: "(yes|no), [0-9]{1,3}!" });
        const mask = Array.from(await m.mask());
        // The token trie is kept once the worker is idle: wait until it is there.
        let trieEntry = null;
        for (let i = 0; i < 200 && !trieEntry; i++) {
            const keys = await (await caches.open("anytok-trie-v1")).keys();
            if (keys.length) {
                const bytes = await (await (await caches.open("anytok-trie-v1")).match(keys[0])).arrayBuffer();
                trieEntry = [keys.length, new URL(keys[0].url).pathname.split("/").pop(),
                             Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), (b) => b.toString(16).padStart(2, "0")).join("")];
            } else await new Promise((r) => setTimeout(r, 50));
        }
        // The snapshot is stored in the background: wait until it is there.
        for (let i = 0; i < 200 && options.snapshot !== false; i++) {
            const cache = await caches.open("anytok-start-v2");
            if ((await cache.keys()).length >= stored) break;
            await new Promise((r) => setTimeout(r, 50));
        }
        const cache = await caches.open("anytok-start-v2");
        const entries = await cache.keys();
        const entry = entries.length ? new Uint8Array(await (await cache.match(entries[0])).arrayBuffer()) : null;
        return { snapshot: tok.runtimeInfo.snapshot, compiled: tok.runtimeInfo.compiled, files: tok.runtimeInfo.files,
                 ids, mask, trie: m.trie, trieEntry, keys: entries.length, stored: entry?.length,
                 heap: entry && new DataView(entry.buffer).getUint32(0, true) };
    }"""
    damage = """async () => {
        const cache = await caches.open("anytok-start-v2");
        const keys = await cache.keys();
        for (const k of keys) {
            const data = new Uint8Array(await (await cache.match(k)).arrayBuffer());
            data[data.length >> 1] ^= 1;  // one bit of the snapshot flipped, its headers (checksum) kept
            await cache.put(k, new Response(data, { headers: (await cache.match(k)).headers }));
        }
        return keys.length;
    }"""
    ctx, guard = new_context(browser)
    got = []
    try:
        # A page's own glue at a URL that does not name its content: the snapshot key hashes the
        # glue's bytes instead of the URLs, a snapshot of its own.
        own = {"glueURL": "/worker_glue.py"}
        runs = [({}, None, 1), ({}, None, 1), ({}, damage, 1), ({}, None, 1), ({"snapshot": False}, None, 1),
                (own, None, 2), (own, None, 2)]
        for options, before, stored in runs:
            page = ctx.new_page()
            page.goto(demo_url + "anytok-assets.json")
            if before:
                assert page.evaluate(before) == 1
            warnings = []
            page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
            got.append(evaluate_json(page, script, [texts, options, stored]))
            got[-1]["warnings"] = warnings
            page.close()
    finally:
        ctx.close()
    guard.check()
    assert [g["snapshot"] for g in got] == ["made", "restored", "made", "restored", "off", "made", "restored"]
    # Stored without its all-zero pages: about half of Pyodide's 30 MiB heap.
    assert all(30 * 2**20 <= g["heap"] <= 30 * 2**20 + 65536 for g in got[:2]), [g["heap"] for g in got]
    assert all(g["stored"] < 0.7 * g["heap"] for g in got[:2]), [(g["stored"], g["heap"]) for g in got]
    assert [g["keys"] for g in got] == [1, 1, 1, 1, 1, 2, 2]
    assert "snapshot could not be restored" in " ".join(got[2]["warnings"])
    enc = anytok_encoding("o200k_base")
    from anytok import constrain

    mask = list(memoryview(constrain.regex("(yes|no), [0-9]{1,3}!").matcher(enc).mask()).cast("I"))
    assert [g["trie"] for g in got] == ["built"] + ["file"] * (len(got) - 1)
    from anytok.constrain.tokens import TokenTrie

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANYTOK_CACHE_DIR", str(tmp_path))
        TokenTrie.from_env(enc.token_env())
    native, = tmp_path.iterdir()
    assert all(g["trieEntry"] == [1, native.name, hashlib.sha256(native.read_bytes()).hexdigest()] for g in got)
    for g in got:
        # (after a restore: as the modules in memory ran when the snapshot was made)
        assert g["compiled"] == {"stdlib": True, "anytok": True, "glue": g is not got[-1] and g is not got[-2]}
        assert g["files"] == ("on demand" if g["snapshot"] == "restored" else "unpacked")
        for label, text in texts.items():
            assert g["ids"][label] == enc.encode(text), (g["snapshot"], label)
        assert g["mask"] == mask, g["snapshot"]


def test_server_caches_content_named_assets_for_good(demo_url):
    manifest = json.loads(urllib.request.urlopen(demo_url + "anytok-assets.json").read())
    immutable = "public, max-age=31536000, immutable"
    for path, expected in [
        (manifest["stdlibURL"], immutable),
        (manifest["wheelURL"], immutable),
        (manifest["glueURL"], immutable),
        (manifest["gluePycURL"], immutable),
        ("anytok.js", "no-cache"),
        ("anytok-assets.json", "no-cache"),
        ("pyodide/pyodide.asm.wasm", "no-cache"),
        (manifest["encodings"]["o200k_base"]["url"], "no-cache"),
    ]:
        with urllib.request.urlopen(demo_url + path) as r:
            assert r.headers["Cache-Control"] == expected, path
    # The content-named URLs do name their content.
    stdlib = urllib.request.urlopen(demo_url + manifest["stdlibURL"]).read()
    assert manifest["stdlibURL"].rsplit("-", 1)[1] == hashlib.sha256(stdlib).hexdigest()[:16] + ".zip"
    wheel = urllib.request.urlopen(demo_url + manifest["wheelURL"]).read()
    assert manifest["wheelURL"].endswith("?v=" + hashlib.sha256(wheel).hexdigest()[:16])


def test_compiled_stdlib_and_wheel_hold_a_pyc_for_every_module():
    import build_web

    with zipfile.ZipFile(build_web.NODE_MODULES / "pyodide" / "python_stdlib.zip") as zf:
        stock = set(zf.namelist())
    compiled = {n for n, _ in build_web.compiled_stdlib()}
    assert compiled == {n[:-3] + ".pyc" if n.endswith(".py") else n for n in stock}
    # The start's part (.pyc) and the part fetched on first use (.py) hold it all, each module
    # once, and the rest's module list names every module of the rest.
    (_, start), (_, rest), rest_modules = build_web.split_stdlib()
    start_names = zipfile.ZipFile(io.BytesIO(start)).namelist()
    rest_names = zipfile.ZipFile(io.BytesIO(rest)).namelist()
    kept = {n for n in compiled if n.split("/")[0].removesuffix(".pyc") not in build_web.STDLIB_LEFT_OUT}
    assert "unittest/__init__.pyc" in compiled - kept and "pdb.pyc" in compiled - kept
    # The rest holds only what the worker can ever import (build_web.importable_stdlib): the
    # modules of the start, anytok and the glue import, with theirs, and the codecs they name.
    with zipfile.ZipFile(build_web.NODE_MODULES / "pyodide" / "python_stdlib.zip") as zf:
        importable = build_web.importable_stdlib({build_web._module_of(n): (zf.read(n), n.endswith("/__init__.py"))
                                                  for n in zf.namelist() if n.endswith(".py")})
    kept_modules = {build_web._module_of(n) for n in kept} - {None}
    got = start_names + [n[:-3] + ".pyc" if n.endswith(".py") else n for n in rest_names]
    assert len(got) == len(set(got)) and set(got) <= kept
    assert {build_web._module_of(n) for n in got} - {None} == kept_modules & (importable | build_web.STDLIB_START)
    assert {"json", "re", "encodings.utf_8"} <= {build_web._module_of(n) for n in start_names}
    # json_schema's decimal and urllib.parse, the CLI's argparse, codecs anytok names by name.
    assert {"argparse", "decimal", "urllib.parse", "encodings.latin_1", "encodings.utf_16"} <= set(rest_modules)
    assert not {"encodings.cp1252", "xml.dom", "sqlite3", "tomllib", "wave"} & set(rest_modules)
    assert set(rest_modules) == {build_web._module_of(n) for n in rest_names} - {None}
    _, wheel = build_web.slim_wheel()
    names = set(zipfile.ZipFile(io.BytesIO(wheel)).namelist())
    sources = {n for n in names if n.endswith(".py")}
    pycs = {n for n in names if n.endswith(".pyc")}
    assert len(sources) > 50 and len(pycs) == len(sources)
    for src in sources:
        folder, _, file = src.rpartition("/")
        assert f"{folder}/__pycache__/{file[:-3]}.cpython-314.pyc" in pycs, src
    # The start's wheel and the rest's zip: together the whole package, each file once.
    (_, start_wheel), (_, rest_zip), anytok_rest = build_web.anytok_parts()
    start_files = {n for n in zipfile.ZipFile(io.BytesIO(start_wheel)).namelist() if ".dist-info/" not in n}
    rest_files = set(zipfile.ZipFile(io.BytesIO(rest_zip)).namelist())
    # (the rest sourceless: each module's .pyc where its .py would be)
    as_wheel = {f"{n.rpartition('/')[0]}/__pycache__/{n.rpartition('/')[2][:-4]}.cpython-314.pyc" for n in rest_files}
    assert all(n.endswith(".pyc") and "__pycache__" not in n for n in rest_files)
    assert as_wheel <= pycs and not start_files & as_wheel
    # ... and only the modules the worker can import (not the CLI, the dataset jobs).
    importable = build_web.importable_anytok()
    kept = {n for n in sources | pycs if build_web._module_of(n) in importable}
    assert start_files | as_wheel | {n[:-4] + ".py" for n in rest_files} == kept
    assert {"anytok", "anytok.core", "anytok.format"} <= {build_web._module_of(n) for n in start_files}
    assert {"anytok.constrain", "anytok.sentencepiece", "anytok.chat", "anytok.incremental"} <= set(anytok_rest)
    assert not {"anytok.cli", "anytok.datasets", "anytok.__main__"} & set(anytok_rest)


def test_server_compresses_as_production_servers_do(demo_url):
    # brotli where build_web.py made a .br (the big files of the first visit), gzip for text
    # types otherwise, nothing for what is compressed already; the bytes are the file's.
    import gzip
    import subprocess

    manifest = json.loads(urllib.request.urlopen(demo_url + "anytok-assets.json").read())
    dist = ROOT / "web" / "dist"

    def get(path: str, accept: str):
        req = urllib.request.Request(demo_url + path, headers={"Accept-Encoding": accept})
        with urllib.request.urlopen(req) as r:
            return r.headers.get("Content-Encoding"), r.headers.get("Vary"), r.read()

    for path, accept, encoding in [
        ("pyodide/pyodide.asm.wasm", "gzip, deflate, br", "br"),
        (manifest["stdlibURL"], "br", "br"),
        ("pyodide/pyodide.asm.wasm", "gzip", "gzip"),
        ("anytok.js", "gzip, br", "gzip"),
        ("anytok.js", "identity", None),
        (manifest["wheelURL"], "gzip, br", None),
        (manifest["encodings"]["o200k_base"]["url"], "gzip, br", None),
    ]:
        got, vary, body = get(path, accept)
        assert got == encoding, (path, accept)
        if encoding == "br":  # decoded by Node's zlib, as independent of the server as it gets
            body = subprocess.run(["node", "-e", "process.stdout.write(require('zlib').brotliDecompressSync(require('fs').readFileSync(0)))"],
                                  input=body, capture_output=True, check=True).stdout
        elif encoding == "gzip":
            body = gzip.decompress(body)
        if encoding:
            assert vary == "Accept-Encoding"
        assert body == (dist / path.split("?")[0]).read_bytes(), path


def test_first_count_fetches_the_start_only_and_the_rest_when_first_used(context, demo_url):
    # A first count fetches neither the rest of the standard library or of anytok nor Pyodide's
    # lock file; the first constrain fetches anytok's rest and the standard library's (once each)
    # and gives native masks.
    page = context.new_page()
    page.goto(demo_url + "anytok-assets.json")
    load(page, "o200k_base")
    enc = anytok_encoding("o200k_base")
    assert page.evaluate("() => window.toks.o200k_base.count('hello world, 世界')") == len(enc.encode("hello world, 世界"))
    fetched = list(context.guard.requests)
    assert not [u for u in fetched if "-rest-" in u or "pyodide-lock.json" in u], fetched
    check_page_constrain_walk(page, "o200k_base", enc, "regex", "(yes|no), [0-9]{1,3}!")
    check_page_constrain_walk(page, "o200k_base", enc, "jsonSchema", CONSTRAIN_SCHEMA)
    # (json_schema imports decimal and urllib.parse, which are in the standard library's rest.)
    for part in ("/anytok-rest-", "/python_stdlib-rest-"):
        assert len([u for u in context.guard.requests if part in u]) == 1, (part, context.guard.requests)
    assert not [u for u in context.guard.requests if "pyodide-lock.json" in u]


def test_network_guard_sees_requests_made_by_workers(browser, demo_url):
    # The guard is what the "no request leaves 127.0.0.1" checks rely on: prove it catches a
    # request from a Web Worker, where Pyodide runs.
    ctx, guard = new_context(browser)
    try:
        page = ctx.new_page()
        page.goto(demo_url + "anytok-assets.json")
        outcome = page.evaluate(
            """() => new Promise((resolve) => {
                const src = "fetch('http://192.0.2.1/x').then(() => postMessage('fetched'), () => postMessage('failed'))";
                const worker = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })));
                worker.onmessage = (e) => resolve(e.data);
            })"""
        )
        assert outcome == "failed"
        assert guard.blocked == ["http://192.0.2.1/x"]
    finally:
        ctx.close()


# --- any tokenizer file: tokenizer.json, SentencePiece .model, tekken, converted .atok ---------

# The test models (build_scripts/fetch/fetch_models.py, fetch_sentencepiece_models.py), served to the
# page from its own origin under /test-models/ by the test itself.
TOKENIZER_FILES = {
    "llama3.tokenizer.json": "hf",
    "minilm.tokenizer.json": "hf",
    "mistral_instruct_tokenizer_240323.model.v3": "sentencepiece",
    "tekken_240911.json": "encoding",
}
FILE_SAMPLE_CHARS = 1_500


def model_file(name: str) -> Path:
    from hf_support import model_path

    if name.endswith(".tokenizer.json"):
        return model_path(name.split(".")[0])
    from fetch_sentencepiece_models import fetch as fetch_sentencepiece_models

    return fetch_sentencepiece_models() / name


_native_tokenizers: dict[str, object] = {}


def native_tokenizer(name: str):
    import anytok

    if name not in _native_tokenizers:
        _native_tokenizers[name] = anytok.load(model_file(name))
    return _native_tokenizers[name]


def native_ids(tok, text: str, add_special_tokens: bool = False) -> list[int]:
    import anytok

    if isinstance(tok, anytok.Encoding):
        return tok.encode(text, disallowed_special=())
    return tok.encode(text, add_special_tokens=add_special_tokens)


def file_samples(corpora: dict[str, str]) -> dict[str, str]:
    """A start and a middle of each corpus, smaller than `samples`: the pipelines are slower."""
    out = {}
    for key, text in corpora.items():
        for start in (0, len(text) // 2):
            out[f"{key}@{start}"] = text[start : start + FILE_SAMPLE_CHARS]
    return out


def serve_files(page, files: dict[str, bytes]) -> None:
    def serve(body: bytes):
        return lambda route: route.fulfill(status=200, body=body, headers={"Content-Type": "application/octet-stream"})

    for name, body in files.items():
        page.route(f"**/test-models/{name}", serve(body))


JS_FILE_IDS = """async ([url, texts, isEncoding]) => {
    const tok = await AnyTok.load({ url });
    window.toks[url] = tok;
    const options = isEncoding ? { disallowedSpecial: [] } : {};
    const out = { name: tok.name, kind: tok.kind, nVocab: tok.nVocab, specialTokens: tok.specialTokens,
                  methods: [typeof tok.countTillLimit, typeof tok.chunks, typeof tok.splitByTokens], texts: {} };
    for (const [label, text] of Object.entries(texts)) {
        const ids = await tok.encode(text, options);
        const pieces = await tok.tokenize(text, options);
        out.texts[label] = {
            ids,
            count: await tok.count(text, options),
            piecesJoin: pieces.map((p) => p.text).join("") === text,
            piecesIds: pieces.flatMap((p) => p.ids).join(",") === ids.join(","),
        };
    }
    out.batch = await tok.countBatch(Object.values(texts), options);
    const first = Object.values(texts)[0];
    if (tok.chunks) out.chunks = await tok.chunks(first, 5, { overlap: 2 });
    if (tok.splitByTokens) out.split = await tok.splitByTokens(first, 5);
    if (tok.countTillLimit) out.tillLimit = [await tok.countTillLimit(first, 3), await tok.countTillLimit(first, 100000)];
    return out;
}"""


@pytest.mark.parametrize("file", list(TOKENIZER_FILES))
def test_tokenizer_files_load_by_url_and_give_native_ids(shim, corpora, file):
    tok = native_tokenizer(file)
    kind = TOKENIZER_FILES[file]
    texts = file_samples(corpora)
    serve_files(shim, {file: model_file(file).read_bytes()})
    shim.evaluate("() => { window.toks = window.toks || {}; }")
    got = shim.evaluate(JS_FILE_IDS, [f"/test-models/{file}", texts, kind == "encoding"])
    assert got["kind"] == kind
    assert got["name"] == tok.name == file.split(".")[0]
    assert got["nVocab"] == tok.n_vocab
    # count_till_limit, chunks, split_by_tokens: offered exactly when the tokenizer has them.
    assert [t == "function" for t in got["methods"]] == [
        hasattr(tok, m) for m in ("count_till_limit", "chunks", "split_by_tokens")]
    for label, text in texts.items():
        expected = native_ids(tok, text)
        r = got["texts"][label]
        assert r["ids"] == expected, f"{file} {label}: ids differ"
        assert r["count"] == len(expected)
        assert r["piecesJoin"] and r["piecesIds"], (file, label, r)
    assert got["batch"] == [len(native_ids(tok, t)) for t in texts.values()]
    first = next(iter(texts.values()))
    assert got["chunks"] == tok.chunks(first, 5, overlap=2)
    assert got["split"] == list(tok.split_by_tokens(first, 5))
    assert got["tillLimit"] == [tok.count_till_limit(first, 3), tok.count_till_limit(first, 100000)]


# Every kind of tokenizer constrain reads (tests/test_constrain.py holds native masks equal to
# llguidance's on each): another tiktoken-style encoding, a byte-level BPE tokenizer.json, a
# byte-fallback one and a SentencePiece .model, each loaded by URL in the page.
CONSTRAIN_FILES = ["llama3.tokenizer.json", "llama2.tokenizer.json", "tokenizer.model.v1"]


def test_constrain_in_the_page_for_every_kind_of_tokenizer(shim):
    load(shim, "cl100k_base")
    check_page_constrain_walk(shim, "cl100k_base", anytok_encoding("cl100k_base"), "regex", "[A-Za-z ]{1,20}[.!?]")
    serve_files(shim, {file: model_file(file).read_bytes() for file in CONSTRAIN_FILES})
    for file in CONSTRAIN_FILES:
        shim.evaluate("async ([file]) => { window.toks[file] = await AnyTok.load({ url: `/test-models/${file}` }); }", [file])
        tok = native_tokenizer(file)
        check_page_constrain_walk(shim, file, tok, "regex", "(yes|no|maybe), [a-z]{2,8} [0-9]{1,3}!")
        check_page_constrain_walk(shim, file, tok, "jsonSchema", CONSTRAIN_SCHEMA)


@pytest.mark.parametrize("file", ["llama3.tokenizer.json", "minilm.tokenizer.json", "mistral_instruct_tokenizer_240323.model.v3"])
def test_tokenizer_files_special_token_options(shim, file):
    tok = native_tokenizer(file)
    serve_files(shim, {file: model_file(file).read_bytes()})
    text = "Hello <|begin_of_text|> [CLS] <s> world\nCafé"
    got = shim.evaluate(
        """async ([url, text]) => {
            const tok = await AnyTok.load({ url });
            const out = {
                plain: await tok.encode(text),
                added: await tok.encode(text, { addSpecialTokens: true }),
                addedCount: await tok.count(text, { addSpecialTokens: true }),
                addedPieces: (await tok.tokenize(text, { addSpecialTokens: true })).flatMap((p) => p.ids),
                decoded: await tok.decode(await tok.encode(text)),
            };
            try { await tok.encode(text, { allowedSpecial: "all" }); out.wrongOption = null; }
            catch (e) { out.wrongOption = [e.pythonType, e.message]; }
            return out;
        }""",
        [f"/test-models/{file}", text],
    )
    assert got["plain"] == tok.encode(text)
    assert got["added"] == got["addedPieces"] == tok.encode(text, add_special_tokens=True)
    assert got["addedCount"] == len(got["added"])
    assert got["decoded"] == tok.decode(tok.encode(text))
    assert got["wrongOption"][0] == "ValueError" and "addSpecialTokens" in got["wrongOption"][1]


def test_converted_atok_and_bytes_load_with_native_ids(shim, corpora):
    from anytok.files import tokenizer_from_bytes, tokenizer_to_bytes

    tok = native_tokenizer("llama3.tokenizer.json")
    atok = tokenizer_to_bytes(tok)
    serve_files(shim, {"llama3.atok": atok})
    texts = file_samples({k: corpora[k] for k in ("en", "zh")})
    got = shim.evaluate(JS_FILE_IDS, ["/test-models/llama3.atok", texts, False])
    assert got["kind"] == "hf" and got["name"] == tok.name
    for label, text in texts.items():
        assert got["texts"][label]["ids"] == tok.encode(text), label

    # The same, as bytes ({ data }), and converted back to .atok by the page.
    minilm = native_tokenizer("minilm.tokenizer.json")
    text = corpora["en"][:2000]
    got = evaluate_json(
        shim,
        """async ([bytes, text]) => {
            const tok = await AnyTok.load({ data: new Uint8Array(bytes), fileName: "minilm.tokenizer.json" });
            return { name: tok.name, ids: await tok.encode(text), atok: Array.from(await tok.toAtok()) };
        }""",
        [list(model_file("minilm.tokenizer.json").read_bytes()), text],
    )
    assert got["name"] == "minilm" and got["ids"] == minilm.encode(text)
    assert tokenizer_from_bytes(bytes(got["atok"])).encode(text) == minilm.encode(text)


# --- the demo page --------------------------------------------------------------------------

def shown_count(page) -> int:
    return int(page.get_attribute("#count", "data-count"))


def set_text(page, text: str) -> None:
    # As a paste would: new value, one input event.  (Playwright's fill() types 100 KB slowly.)
    page.evaluate(
        """([text]) => {
            const el = document.querySelector('#text');
            el.value = text;
            el.dispatchEvent(new InputEvent('input', { inputType: 'insertFromPaste' }));
        }""",
        [text],
    )
    wait_status(page)


def type_and_wait(page, at: int | None, keys: str) -> dict:
    page.evaluate(
        """([at]) => {
            const el = document.querySelector('#text');
            el.focus();
            const pos = at === null ? el.value.length : at;
            el.setSelectionRange(pos, pos);
        }""",
        [at],
    )
    page.keyboard.type(keys, delay=15)
    wait_status(page)
    return page.evaluate("window.anytokDemo.lastUpdate")


def test_demo_counts_live_and_reencodes_only_the_edit(demo, corpora):
    text = corpora["en"][:70_000] + "\n" + corpora["ja"][:25_000] + "\nThe end\n"
    assert len(text.encode()) > 100_000
    enc = anytok_encoding("o200k_base")
    set_text(demo, text)
    assert shown_count(demo) == enc.count(text, disallowed_special=())

    update = type_and_wait(demo, None, " and a few more words")
    text += " and a few more words"
    assert demo.input_value("#text") == text
    assert shown_count(demo) == enc.count(text, disallowed_special=())
    assert update["reencodedBytes"] < 20_000, update

    update = type_and_wait(demo, 30_000, "INSERTED\nLine")
    text = text[:30_000] + "INSERTED\nLine" + text[30_000:]
    assert shown_count(demo) == enc.count(text, disallowed_special=())
    assert update["reencodedBytes"] < 40_000, update

    # The token view: coloured spans whose ids are those of the text they show.
    shown = demo.evaluate("document.querySelector('#text').value.slice(0, window.anytokDemo.lastUpdate.shownChars)")
    ids = demo.evaluate("Array.from(document.querySelectorAll('#tokens .t'), (t) => t.dataset.ids).join(' ')")
    assert [int(i) for i in ids.split()] == enc.encode(shown, disallowed_special=())
    demo.hover("#tokens .t >> nth=3")
    assert " · id " in demo.text_content("#inspect")


def test_demo_table_selector_and_special_token_modes(demo):
    sample = demo.input_value("#text")
    demo.wait_for_function(
        "document.querySelectorAll('#counts td.tokens[data-count]').length === document.querySelectorAll('#counts tbody tr').length"
    )
    table = demo.evaluate(
        "Object.fromEntries(Array.from(document.querySelectorAll('#counts tbody tr'), (r) => [r.dataset.encoding, +r.querySelector('.tokens').dataset.count]))"
    )
    assert table == {n: anytok_encoding(n).count(sample, disallowed_special=()) for n in ALL_ENCODINGS}

    demo.select_option("#encoding", "cl100k_base")
    wait_status(demo)
    assert shown_count(demo) == table["cl100k_base"]
    assert demo.get_attribute("#counts tr.selected", "data-encoding") == "cl100k_base"

    text = "Before <|endoftext|> after"
    enc = anytok_encoding("cl100k_base")
    set_text(demo, text)
    assert shown_count(demo) == enc.count(text, disallowed_special=())
    demo.select_option("#special", "special")
    wait_status(demo)
    assert shown_count(demo) == enc.count(text, allowed_special="all")
    demo.select_option("#special", "error")
    wait_status(demo, "error")
    assert "special token <|endoftext|>" in demo.text_content("#error")
    assert "Special tokens menu" in demo.text_content("#error")
    demo.select_option("#special", "text")
    wait_status(demo)
    assert demo.is_hidden("#error")


def test_demo_lone_surrogates_get_a_notice_and_the_native_count(demo):
    demo.evaluate(r"""() => {
        const el = document.querySelector('#text');
        el.value = 'broken \ud800 text \udfff!';
        el.dispatchEvent(new Event('input'));
    }""")
    wait_status(demo)
    assert "lone surrogate" in demo.text_content("#notice") and demo.is_visible("#notice")
    assert shown_count(demo) == anytok_encoding("o200k_base").count("broken \ud800 text \udfff!", disallowed_special=())


def test_demo_unknown_encoding_gives_a_clear_error(profile_page, demo_url):
    page = profile_page
    page.goto(demo_url + "?encoding=o300k_base")
    wait_status(page, "error")
    message = page.text_content("#error")
    assert 'unknown encoding "o300k_base"' in message and "cl100k_base" in message, message
    # Not a dead end: choosing a bundled encoding recovers.
    page.select_option("#encoding", "p50k_base")
    wait_status(page)
    assert page.is_hidden("#error")
    assert shown_count(page) == anytok_encoding("p50k_base").count(page.input_value("#text"), disallowed_special=())


def test_demo_corrupt_vocabulary_gives_a_clear_error_and_is_not_cached(context, demo_url):
    data = bytearray((ROOT / "vocab_binaries" / "o200k_base.atok").read_bytes())
    data[len(data) // 2] ^= 0xFF
    page = context.new_page()
    page.route("**/vocab/o200k_base.atok*", lambda route: route.fulfill(status=200, body=bytes(data)))
    page.goto(demo_url)
    wait_status(page, "error")
    message = page.text_content("#error")
    assert "o200k_base.atok" in message and "VocabFormatError" in message, message
    page.wait_for_timeout(2000)  # (a copy is made once the worker has been idle 0.5 s)
    cached = page.evaluate("async () => (await caches.open('anytok-vocab-v1')).keys().then((k) => k.length)")
    assert cached == 0
    page.unroute("**/vocab/o200k_base.atok*")
    page.reload()
    wait_status(page)


def test_vocabulary_is_fetched_once_and_then_kept_in_cache_storage(context, demo_url, corpora):
    # Routing (the network guard) turns the HTTP cache off, so a vocabulary not fetched on the
    # second visit came from Cache Storage.
    page = context.new_page()
    page.goto(demo_url)
    wait_status(page)
    fetched = lambda: sum("/vocab/o200k_base.atok" in u for u in context.guard.requests)  # noqa: E731
    assert fetched() == 1
    # The copy is made once the worker is idle: wait until it is stored (an entry being written
    # is listed by keys() before match() finds it).
    assert page.evaluate("""async () => {
        for (let i = 0; i < 600; i++) {
            const cache = await caches.open('anytok-vocab-v1');
            const [k] = await cache.keys();
            if (k && (await cache.match(k))) return true;
            await new Promise((r) => setTimeout(r, 50));
        }
        return false;
    }""")
    page.reload()
    wait_status(page)
    assert fetched() == 1
    assert load(page, "o200k_base") == "cache"
    # Kept with its payload uncompressed (flags 0) and a text index (field 12): the same
    # vocabulary, no decompression, no text table until a longer text comes.
    kept = bytes(evaluate_json(page, """async () => {
        const cache = await caches.open('anytok-vocab-v1');
        const [k] = await cache.keys();
        return Array.from(new Uint8Array(await (await cache.match(k)).arrayBuffer()));
    }"""))
    shipped = (ROOT / "vocab_binaries" / "o200k_base.atok").read_bytes()
    assert kept[6:8] == b"\x01\x00" and shipped[6:8] == b"\x01\x01"
    assert kept == vocab_format.uncompressed(shipped, index=True)
    assert vocab_format.loads(kept, check_duplicates=False).index is not None
    assert vocab_format.loads(kept) == vocab_format.loads(shipped)
    # A fresh load from the copy: short ASCII texts (through the index), then a longer one
    # (the table built), then text that is not ASCII: native anytok's ids (= tiktoken's).
    enc = anytok_encoding("o200k_base")
    texts = ["hello world", "def f(x):\n    return x ** 2  # squared", "Woodhouse, handsome, clever" * 3,
             corpora["en"][:40000], "kept: ✓ 日本"]
    got = evaluate_json(page, """async (texts) => {
        const { AnyTok } = await import('/anytok.js');
        const tok = await AnyTok.load({ encoding: "o200k_base" });
        const out = [];
        for (const t of texts) out.push([await tok.encode(t), await tok.count(t)]);
        return { source: tok.source, out };
    }""", texts)
    assert got["source"] == "cache"
    assert got["out"] == [[enc.encode(t), len(enc.encode(t))] for t in texts]


def ten_megabytes(corpora) -> str:
    # Ten different variants of the four corpora, so that no part repeats another.
    parts, size, k = [], 0, 0
    while size < 10 * 2**20:
        for text in corpora.values():
            variant = text.replace("\n", f"\n{k} ")
            parts.append(variant)
            size += len(variant.encode())
        k += 1
    return "".join(parts)


def test_demo_counts_a_10mb_file_with_progress(demo, corpora):
    text = ten_megabytes(corpora)
    data = text.encode()
    demo.set_input_files("#file", files=[{"name": "big.txt", "mimeType": "text/plain", "buffer": data}])
    seen, polls, slowest = set(), 0, 0.0
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline:
        t = time.monotonic()
        status, value, visible = demo.evaluate(
            "[document.body.dataset.status, document.querySelector('#progress').value, !document.querySelector('#progress-row').hidden]"
        )
        slowest = max(slowest, time.monotonic() - t)
        polls += 1
        if visible:
            seen.add(round(value, 2))
        if status != "busy":
            break
        time.sleep(0.2)
    assert status == "ready", demo.text_content("#error")
    assert shown_count(demo) == anytok_encoding("o200k_base").count(text, disallowed_special=())
    # Counted by two workers (this machine has 2 cores; the demo asks for 2 from 2 MiB).
    assert demo.evaluate("window.anytokDemo.lastUpdate.workers") == 2
    assert demo.text_content("#file-name").startswith("big.txt")
    assert demo.text_content("#bytes") == f"{len(data):,}"
    assert len([v for v in seen if 0 < v < 1]) >= 3, sorted(seen)  # the bar moved
    assert slowest < 2.0, f"the page took {slowest:.1f} s to answer while counting"
    assert demo.is_hidden("#progress-row")


def test_demo_takes_dropped_files(demo, corpora):
    enc = anytok_encoding("o200k_base")
    drop = """([name, text]) => {
        const data = new DataTransfer();
        data.items.add(new File([text], name, { type: 'text/plain' }));
        for (const type of ['dragenter', 'dragover', 'drop']) {
            window.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
        }
    }"""
    text = corpora["code"][:200_000]
    demo.evaluate(drop, ["code.py", text])
    wait_status(demo)
    # In the editor (a text this long through its window: demo.js showWindow), all of it counted.
    assert demo.evaluate("window.anytokDemo.text()") == text and demo.is_hidden("#file-view")
    assert demo.input_value("#text") in text and demo.is_visible("#window-note")
    assert shown_count(demo) == enc.count(text, disallowed_special=())

    # "\r\n" line ends: counted as the file is, not as a textarea would turn it.
    crlf = corpora["en"][:100_000].replace("\n", "\r\n")
    demo.evaluate(drop, ["windows.txt", crlf])
    wait_status(demo)
    assert demo.is_visible("#file-view") and "line ends" in demo.text_content("#file-why")
    assert shown_count(demo) == enc.count(crlf, disallowed_special=())
    assert demo.is_hidden("#drop-overlay")


def test_demo_constrain_view_steps_through_a_generation(profile_page, demo_url):
    from anytok import constrain

    page = profile_page
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(demo_url + "?view=constrain")
    view = page.locator("#constrain-view")
    # A malformed regex: a clear message, no run.
    page.select_option("#constrain-kind", "regex")
    page.fill("#constrain-spec", "(yes|no")
    page.click("#constrain-start")
    page.wait_for_selector("#constrain-view[data-state=error]", state="attached")
    assert "RegexSyntaxError" in page.inner_text("#constrain-message")
    pattern = "(yes|no), [0-9]{1,3}!"
    page.fill("#constrain-spec", pattern)
    page.click("#constrain-start")
    page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    # the first matcher for a tokenizer says how its token trie was made (matcher.trie)
    trie = {"file": "token trie read from this browser's cache", "built": "token trie built first"}
    assert trie[page.evaluate("window.anytokConstrainDemo.matcher.trie")] in page.inner_text("#constrain-message")
    page.locator("#constrain-allowed button").first.click()  # a token picked by hand
    page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    for _ in range(8):
        if page.evaluate("window.anytokConstrainDemo.allowed.length") == 0:
            break
        page.click("#constrain-random")
        page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    demo = page.evaluate("({ tokens: window.anytokConstrainDemo.tokens, texts: window.anytokConstrainDemo.texts })")
    enc = anytok_encoding("o200k_base")
    m = constrain.regex(pattern).matcher(enc)
    for t in demo["tokens"]:
        assert m.consume(t), demo
    finished = demo["tokens"][-1] == enc.eot_token
    assert enc.eot_token not in demo["tokens"][:-1]  # nothing after the end of sequence
    expected = enc.decode([t for t in demo["tokens"] if t != enc.eot_token]) + ("⟨end⟩" if finished else "")
    shown_text = page.inner_text("#constrain-output")
    raw = page.eval_on_selector_all("#constrain-output span", "ss => ss.map((s) => s.dataset.text).join('')")
    assert raw == "".join(demo["texts"]) == expected
    assert shown_text == expected.replace(" ", "·")  # whitespace made visible
    stats = page.inner_text("#constrain-stats")
    if finished:  # nothing is allowed after the end: no count of allowed tokens, no random step
        assert f"step {len(demo['tokens'])} · finished" in stats and "allowed" not in stats
        assert page.is_disabled("#constrain-random") and page.locator("#constrain-allowed button").count() == 0
    else:
        n = len(m.allowed())
        assert f"step {len(demo['tokens'])} · {n:,} token{'' if n == 1 else 's'} allowed" in stats
        assert ("complete" if m.is_accepting() else "allowed ·") in stats
    page.click("#constrain-undo")
    page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    assert page.evaluate("window.anytokConstrainDemo.tokens") == demo["tokens"][:-1]
    # Every bundled encoding can be chosen; another one starts a run over its own vocabulary.
    options = page.eval_on_selector_all("#constrain-encoding option", "os => os.map((o) => o.value)")
    assert sorted(options) == sorted(ALL_ENCODINGS) and page.input_value("#constrain-encoding") == "o200k_base"
    page.select_option("#constrain-encoding", "cl100k_base")
    page.click("#constrain-start")
    page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    cl100k = anytok_encoding("cl100k_base")
    assert page.evaluate("window.anytokConstrainDemo.tok.name") == "cl100k_base"
    assert trie[page.evaluate("window.anytokConstrainDemo.matcher.trie")] in page.inner_text("#constrain-message")
    page.click("#constrain-start")  # (a second matcher: the trie was made, nothing said)
    page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    assert "token trie" not in page.inner_text("#constrain-message")
    assert page.evaluate("window.anytokConstrainDemo.allowed") == constrain.regex(pattern).matcher(cl100k).allowed()
    assert view.get_attribute("data-state") == "ready" and errors == []


def test_demo_constrain_view_offers_llama_cpp_grammars(profile_page, demo_url):
    # The Example list: our own examples, then llama.cpp's 8 grammars (build_web.py copies them
    # from the cached llama-cpp-python sdist); picking one sets the kind and the text, and random
    # steps through it are allowed by native anytok.constrain.gbnf.
    from anytok import constrain

    cache = Path(__file__).resolve().parent.parent / ".cache" / "llama_cpp" / "grammars"
    page = profile_page
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(demo_url + "?view=constrain")
    page.wait_for_function("document.querySelectorAll('#constrain-example option').length > 8")
    labels = page.eval_on_selector_all("#constrain-example option", "os => os.map((o) => o.textContent)")
    names = sorted(p.stem for p in cache.glob("*.gbnf"))
    assert len(names) == 8 and [f"llama.cpp: {n}.gbnf" for n in names] == [x for x in labels if x.startswith("llama.cpp")]
    page.select_option("#constrain-example", label="llama.cpp: chess.gbnf")
    text = (cache / "chess.gbnf").read_text()
    assert page.input_value("#constrain-kind") == "gbnf" and page.input_value("#constrain-spec") == text
    page.click("#constrain-start")
    page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    for _ in range(6):
        page.click("#constrain-random")
        page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    tokens = page.evaluate("window.anytokConstrainDemo.tokens")
    m = constrain.gbnf(text).matcher(anytok_encoding("o200k_base"))
    assert len(tokens) == 6 and all(m.consume(t) for t in tokens)
    # an example with special tokens compiles in the page too
    page.select_option("#constrain-example", label="Lark: tool call with special tokens")
    page.click("#constrain-start")
    page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    assert 200018 in page.evaluate("window.anytokConstrainDemo.allowed")  # <|endofprompt|>
    assert errors == []


def test_demo_constrain_view_random_steps_make_progress_on_the_default_schema(profile_page, demo_url):
    # The default JSON Schema allows whitespace between any two JSON tokens: 20 random steps
    # write at least 20 non-whitespace characters (whitespace-only tokens are taken only when
    # nothing else is allowed), each step allowed by native anytok.constrain; the list shows the
    # whitespace-only tokens last; the output shows whitespace, compactly.
    import re

    from anytok import constrain

    page = profile_page
    page.goto(demo_url + "?view=constrain")
    page.select_option("#constrain-kind", "jsonSchema")
    schema = page.input_value("#constrain-spec")
    page.click("#constrain-start")
    page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    enc = anytok_encoding("o200k_base")

    def listed_in_order():
        ids = page.eval_on_selector_all("#constrain-allowed button", "bs => bs.map((b) => +b.title.split(' ')[1])")
        blank = [not enc.decode([i]).strip() and i != enc.eot_token for i in ids]
        assert blank == sorted(blank), "a whitespace-only token is listed before a token that makes progress"
        return ids, blank

    native = constrain.json_schema(schema).matcher(enc)
    reordered = 0  # steps where id order would have listed whitespace-only tokens before others
    for _ in range(20):
        ids, blank = listed_in_order()
        by_id = [not enc.decode([i]).strip() for i in native.allowed()[:len(ids)] if i != enc.eot_token]
        reordered += by_id != sorted(by_id)
        if page.evaluate("window.anytokConstrainDemo.allowed.length") == 0:
            break
        page.click("#constrain-random")
        page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
        assert native.consume(page.evaluate("window.anytokConstrainDemo.tokens.at(-1)"))
    assert reordered > 0
    tokens = page.evaluate("window.anytokConstrainDemo.tokens")
    m = constrain.json_schema(schema).matcher(enc)
    for t in tokens:
        assert m.consume(t), tokens
    text = enc.decode([t for t in tokens if t != enc.eot_token])
    assert len(re.sub(r"\s", "", text)) >= 20, text
    listed_in_order()
    shown_text = page.inner_text("#constrain-output")
    assert not re.search(r"\s", shown_text.replace("⟨end⟩", "")), shown_text
    # The shown form: spaces as "·", newlines as "↵", runs of more than three as "·×N".
    assert page.evaluate("window.anytokConstrainShown('a  \\n\\n      b\\t')") == "a··↵↵·×6b→"


def test_demo_screenshot(demo, tmp_path):
    # Not a picture comparison: the page renders, with tokens, a count and the table filled.
    demo.wait_for_function("document.querySelectorAll('#counts td.tokens[data-count]').length === 7")
    path = ROOT / ".cache" / "web-test" / "demo.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    demo.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 20_000
    assert demo.locator("#tokens .t").count() > 20


def test_demo_opens_a_tokenizer_file(demo, corpora):
    tok = native_tokenizer("minilm.tokenizer.json")
    data = model_file("minilm.tokenizer.json").read_bytes()
    demo.set_input_files("#tokenizer-file", files=[{"name": "minilm.tokenizer.json", "mimeType": "application/json", "buffer": data}])
    demo.wait_for_function("document.querySelector('#encoding').value === 'file:minilm.tokenizer.json'")
    wait_status(demo)
    sample = demo.input_value("#text")
    assert shown_count(demo) == tok.count(sample)
    assert demo.evaluate("document.querySelector('#encoding').selectedOptions[0].textContent") == "minilm.tokenizer.json"
    assert "minilm.tokenizer.json" in demo.text_content("#which")
    ids = demo.evaluate("Array.from(document.querySelectorAll('#tokens .t'), (t) => t.dataset.ids).join(' ')")
    assert [int(i) for i in ids.split()] == tok.encode(sample)
    assert demo.is_visible("#download-atok") and demo.is_disabled("#special")

    # Live: an edit is counted with it too.
    text = corpora["en"][:3000] + "\nCafé 日本語"
    set_text(demo, text)
    assert shown_count(demo) == tok.count(text)

    # Its .atok, converted in the page, gives the same ids natively.
    from anytok.files import tokenizer_from_bytes

    with demo.expect_download() as download:
        demo.click("#download-atok")
    assert download.value.suggested_filename == "minilm.tokenizer.atok"
    assert tokenizer_from_bytes(Path(download.value.path()).read_bytes()).encode(text) == tok.encode(text)

    # Dropped on the button: a SentencePiece model; the bundled encodings still work after.
    sp = native_tokenizer("mistral_instruct_tokenizer_240323.model.v3")
    evaluate_json(
        demo,
        """([bytes]) => {
            const data = new DataTransfer();
            data.items.add(new File([new Uint8Array(bytes)], "mistral.model.v3"));
            const button = document.querySelector('#open-tokenizer');
            for (const type of ['dragenter', 'dragover', 'drop']) {
                button.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
            }
        }""",
        [list(model_file("mistral_instruct_tokenizer_240323.model.v3").read_bytes())],
    )
    demo.wait_for_function("document.querySelector('#encoding').value === 'file:mistral.model.v3'")
    wait_status(demo)
    assert shown_count(demo) == sp.count(text)
    assert demo.input_value("#text") == text and demo.is_hidden("#file-view")
    path = ROOT / ".cache" / "web-test" / "demo-tokenizer-file.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    demo.screenshot(path=str(path), full_page=True)
    demo.select_option("#encoding", "cl100k_base")
    wait_status(demo)
    assert shown_count(demo) == anytok_encoding("cl100k_base").count(text, disallowed_special=())
    assert not demo.is_disabled("#special")


# --- training in the browser (AnyTok.train) ---------------------------------------------------

TRAIN_CHARS = 50_000
TRAIN_VOCAB = 600
TRAIN_SPECIALS = ["<|endoftext|>"]
JS_TRAIN = """async ([texts, options]) => {
    const { AnyTok } = await import('/anytok.js');
    const progress = [];
    const tok = await AnyTok.train(texts, options, { onProgress: (p) => progress.push(p) });
    const t = tok.training;
    const probe = "Emma Woodhouse, handsome, clever, and rich <|endoftext|> 12345!";
    return {
        progress, kind: tok.kind, nVocab: tok.nVocab, nMerges: t.nMerges, style: t.style,
        merges: Array.from(t.merges), atok: Array.from(t.files.atok),
        tokenizerJson: t.files.tokenizerJson ?? null, tiktoken: t.files.tiktoken ?? null,
        ids: await tok.encode(probe, tok.kind === "encoding" ? { allowedSpecial: "all" } : {}),
        count: await tok.count(probe, tok.kind === "encoding" ? { allowedSpecial: "all" } : {}),
        decoded: await tok.decode(await tok.encode("Emma, plainly.")),
    };
}"""


@pytest.mark.parametrize("style", ["hf", "tiktoken"])
def test_train_in_the_page_equals_native_train(shim, corpora, style):
    import anytok
    from anytok.files import tokenizer_from_bytes

    text = corpora[next(iter(corpora))][:TRAIN_CHARS]
    options = {"vocabSize": TRAIN_VOCAB, "style": style, "pattern": "o200k_base", "specialTokens": TRAIN_SPECIALS}
    got = shim.evaluate(JS_TRAIN, [[text], options])
    native = anytok.train(texts=[text], vocab_size=TRAIN_VOCAB, style=style, pattern="o200k_base",
                          special_tokens=TRAIN_SPECIALS)
    assert got["merges"] == [x for m in native.merges for x in m]
    assert got["nMerges"] == len(native.merges) and got["nVocab"] == native.n_vocab and got["style"] == style
    probe = "Emma Woodhouse, handsome, clever, and rich <|endoftext|> 12345!"
    if style == "hf":
        assert got["kind"] == "hf" and got["tiktoken"] is None
        assert got["tokenizerJson"] == native.tokenizer_json_text()
        tok = native.to_tokenizer()
        expected = tok.encode(probe)
    else:
        assert got["kind"] == "encoding" and got["tokenizerJson"] is None
        assert got["tiktoken"] == native.tiktoken_text()
        tok = native.to_encoding()
        expected = tok.encode(probe, allowed_special="all")
    assert got["ids"] == expected and got["count"] == len(expected)
    assert got["decoded"] == "Emma, plainly."
    # The .atok the page offers for download loads natively with the same ids.
    assert tokenizer_from_bytes(bytes(got["atok"]), "trained.atok").encode(probe, **(
        {"allowed_special": "all"} if style == "tiktoken" else {})) == expected
    # Progress: counting (MB, MB/s), then merging (done of total, ETA), each with a last report.
    count = [p for p in got["progress"] if p["phase"] == "count"]
    merge = [p for p in got["progress"] if p["phase"] == "merge"]
    assert count and merge and got["progress"].index(merge[0]) > got["progress"].index(count[-1])
    assert count[-1]["finished"] and count[-1]["mb"] == pytest.approx(TRAIN_CHARS / 1e6) and count[-1]["mbPerS"] > 0
    assert merge[-1]["finished"] and merge[-1]["done"] == merge[-1]["total"] == len(native.merges)
    assert all("etaS" in p for p in merge)


def test_cancelled_training_rejects_and_the_page_stays_usable(shim, corpora):
    load(shim, "o200k_base")
    got = shim.evaluate(
        """async ([texts, small]) => {
            const { AnyTok } = window;
            const controller = new AbortController();
            const seen = [];
            const started = performance.now();
            const training = AnyTok.train(texts, { vocabSize: 30000, style: "hf" }, {
                signal: controller.signal,
                onProgress: (p) => { seen.push(p.phase); if (seen.length === 1) controller.abort(); },
            });
            let error = null;
            try {
                await training;
            } catch (err) {
                error = { name: err.name, ms: performance.now() - started };
            }
            // The page's tokenizers still work, and so does the next training.
            const count = await window.toks.o200k_base.count("hello world");
            const again = await AnyTok.train([small], { vocabSize: 300, style: "tiktoken" });
            const pre = new AbortController();
            pre.abort();
            let preError = null;
            try { await AnyTok.train([small], { vocabSize: 300 }, { signal: pre.signal }); }
            catch (err) { preError = err.name; }
            return { error, seen, count, again: again.training.nMerges, ids: await again.encode("hello world"), preError };
        }""",
        [list(corpora.values()), "hello world " * 200],
    )
    import anytok

    assert got["error"] is not None and got["error"]["name"] == "AbortError", got
    assert got["seen"][0] == "count"
    assert got["count"] == 2
    native = anytok.train(texts=["hello world " * 200], vocab_size=300, style="tiktoken")
    assert got["again"] == len(native.merges)
    assert got["ids"] == native.to_encoding().encode("hello world")
    assert got["preError"] == "AbortError"


def test_demo_train_view_trains_tries_downloads_and_cancels(demo, corpora):
    import anytok

    text = corpora[next(iter(corpora))][:TRAIN_CHARS]
    demo.click("#view-train")
    demo.set_input_files("#train-files", [{"name": "sample.txt", "mimeType": "text/plain", "buffer": text.encode()}])
    demo.fill("#train-vocab", str(TRAIN_VOCAB))
    demo.select_option("#train-style", "hf")
    demo.select_option("#train-pattern", "cl100k_base")
    demo.fill("#train-min-frequency", "20")  # (stops the training at 291 of 343 merges)
    demo.click("#train-start")
    demo.wait_for_selector("#train-view[data-state=done]", state="attached")
    native = anytok.train(texts=[text], vocab_size=TRAIN_VOCAB, style="hf", pattern="cl100k_base",
                          special_tokens=TRAIN_SPECIALS, min_frequency=20)
    phases = demo.evaluate("window.anytokTrainDemo.progress.map((p) => p.phase)")
    assert "count" in phases and "merge" in phases
    # Try it on text in the page: the ids shown are the native tokenizer's.
    probe = "Mr. Knightley, a sensible man about seven or eight-and-thirty, 1816."
    tried = demo.get_attribute("#train-view", "data-tried")
    demo.fill("#train-try", probe)
    demo.wait_for_function("(before) => document.querySelector('#train-view').dataset.tried !== before", arg=tried)
    # (spaces shown as ·, as in every view)
    demo.wait_for_function("() => document.querySelector('#train-tokens').textContent === "
                           "document.querySelector('#train-try').value.replaceAll(' ', '·')")
    shown = demo.eval_on_selector_all("#train-tokens .t", "els => els.flatMap((e) => e.dataset.ids.split(' ').map(Number))")
    assert shown == native.to_tokenizer().encode(probe)
    assert demo.inner_text("#train-count") == str(len(shown))
    # Downloads: tokenizer.json is BpeTrainer's document; the .atok has the same ids.
    assert demo.is_hidden("#train-download-tiktoken")
    with demo.expect_download() as d:
        demo.click("#train-download-json")
    assert d.value.suggested_filename == "tokenizer.json"
    assert Path(d.value.path()).read_text(encoding="utf-8") == native.tokenizer_json_text()
    with demo.expect_download() as d:
        demo.click("#train-download-atok")
    from anytok.files import tokenizer_from_bytes

    assert tokenizer_from_bytes(Path(d.value.path()).read_bytes(), "x.atok").encode(probe) == shown
    # Cancel: a long training on every corpus, cancelled once it reports progress.
    demo.click("#train-clear-files")
    demo.set_input_files("#train-files", [{"name": f"{k}.txt", "mimeType": "text/plain", "buffer": v.encode()}
                                          for k, v in corpora.items()])
    demo.fill("#train-vocab", "30000")
    demo.click("#train-start")
    demo.wait_for_function("() => window.anytokTrainDemo.progress.length > 0")
    demo.click("#train-cancel")
    demo.wait_for_selector("#train-view[data-state=cancelled]", state="attached")
    assert demo.inner_text("#train-message") == "Training cancelled."
    assert not demo.is_disabled("#train-start")
    # The Count view still works.
    demo.click("#view-count")
    set_text(demo, "hello world")
    assert shown_count(demo) == 2


# --- the wheel on a bare Pyodide, through micropip -------------------------------------------

def test_micropip_installs_the_wheel_in_a_bare_pyodide(context, demo_url):
    wheels = sorted((ROOT / ".cache" / "micropip").glob("*.whl"))
    names = {w.name.split("-")[0] for w in wheels}
    assert {"micropip", "packaging"} <= names, "run build_scripts/test.sh: it downloads micropip for this test"
    page = context.new_page()
    page.goto(demo_url + "anytok-assets.json")
    # The micropip wheels are served from the same origin, by the test itself.
    def serve(wheel: Path):
        body = wheel.read_bytes()
        return lambda route: route.fulfill(status=200, body=body, headers={"Content-Type": "application/octet-stream"})

    for wheel in wheels:
        page.route(f"**/test-wheels/{wheel.name}", serve(wheel))
    got = page.evaluate(
        """async ([wheels]) => {
            const manifest = await (await fetch('/anytok-assets.json')).json();
            const { loadPyodide } = await import('/pyodide/pyodide.mjs');
            const py = await loadPyodide({ indexURL: '/pyodide/' });
            await py.loadPackage(wheels.map((w) => '/test-wheels/' + w));
            py.globals.set('wheel_url', new URL(manifest.wheelURL, location.href).href);
            py.globals.set('vocab', new Uint8Array(await (await fetch(manifest.encodings.o200k_base.url)).arrayBuffer()));
            const run = py.runPythonAsync(`
import micropip
await micropip.install(wheel_url)
import anytok
from anytok.registry import encoding_from_bytes
enc = encoding_from_bytes(vocab.to_bytes(), "o200k_base.atok")
[anytok.__version__, micropip.list()["anytok"].version, anytok.list_encoding_names(), enc.encode("hello world, 世界")]
`).then((r) => r.toJs());
            const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("micropip.install hung")), 60000));
            return Promise.race([run, timeout]);
        }""",
        [[w.name for w in wheels]],
    )
    import anytok

    assert got[0] == got[1] == anytok.__version__
    assert got[2] == []  # the slim wheel holds no vocabularies
    assert got[3] == anytok_encoding("o200k_base").encode("hello world, 世界")
