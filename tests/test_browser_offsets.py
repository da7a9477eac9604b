"""`tok.encode(text, { offsets: true })` in Chromium against native offsets.

For every kind of tokenizer file the page reads, the page's ids and UTF-16 offsets must be the
native `encode_with_offsets` ones, with each code-point offset mapped to the UTF-16 index
JavaScript uses: on text with astral characters, combining marks, characters split between
tokens and a special or added token.  The references: a bundled encoding and tekken
(`Encoding.encode_with_offsets`, itself tested against `tokenizers`), tokenizer.json files
(`Tokenizer.encode_with_offsets`, tested against `tokenizers`), SentencePiece .model files
(`SentencePieceTokenizer.encode_with_offsets`: sentencepiece's piece spans), Llama 3's GGUF, whose offsets
are those `tokenizers` gives for Llama 3's tokenizer.json (the same vocabulary), BERT-BGE's
WordPiece GGUF against `tokenizers` on MiniLM's tokenizer.json (the same vocabulary), and the
other GGUFs (Llama SPM, nomic-bert-moe's Unigram) against `GGUFTokenizer.encode_with_offsets`
(tests/test_gguf_offsets.py: sentencepiece's piece spans).  The demo's token
view is checked to show exactly these spans.  (Node: tests/test_npm_node.py.)
"""

from __future__ import annotations

import pytest

from browser_support import ROOT, wait_status
from test_browser import browser, demo_profile, demo_url, model_file, native_tokenizer, serve_files, shim  # noqa: F401  (fixtures)

pytestmark = pytest.mark.xdist_group("browser")

TEXT = ("Hi \U0001F600 caf\u00e9 e\u0301\u0323 \U0001F469\u200d\U0001F4BB \u9f98\u6210 "
        "\U00020BB7\u0915\u094d\u0937  x\n\ttab")

# file -> (text with that format's special or added token, encode options in the page)
FILES = {
    "o200k_base": (TEXT + "<|endoftext|>\U0001F600", {"allowedSpecial": "all"}),
    "tekken_240911.json": (TEXT + "</s>\U0001F600", {"allowedSpecial": "all"}),
    "minilm.tokenizer.json": ("[CLS] " + TEXT + " \uFB01ne [SEP]\u00c5", {"addSpecialTokens": True}),
    "qwen3.tokenizer.json": (TEXT + "<|im_start|>A\u030a\U0001F600", {}),
    "mistral_instruct_tokenizer_240323.model.v3": ("[INST] " + TEXT + " \uFB01", {"addSpecialTokens": True}),
    "test_ja_model.model": ("\uff21\uff22 \u30ab\u3099 " + TEXT, {"addSpecialTokens": True}),
    "ggml-vocab-llama-bpe.gguf": (TEXT, {}),
    "ggml-vocab-llama-spm.gguf": (" " + TEXT, {"addSpecialTokens": True}),
    "ggml-vocab-bert-bge.gguf": (TEXT + " \uFB01ne NA\u00cfVE", {"addSpecialTokens": True}),
    "ggml-vocab-nomic-bert-moe.gguf": ("  " + TEXT + "\u00a8 \u2474  ", {"addSpecialTokens": True}),
}


def utf16(text: str, offsets) -> list[list[int]]:
    at = [0]
    for c in text:
        at.append(at[-1] + (2 if ord(c) > 0xFFFF else 1))
    return [[at[a], at[b]] for a, b in offsets]


def file_bytes(name: str) -> bytes:
    if name.endswith(".gguf"):
        return (ROOT / ".cache" / "llama_cpp" / "models" / name).read_bytes()
    return model_file(name).read_bytes()


def native_offsets(name: str, text: str, options: dict):
    """The native ids and code-point offsets for `name` (see the module docstring)."""
    import anytok

    if name == "o200k_base":
        return anytok.get_encoding(name).encode_with_offsets(text, allowed_special="all")
    if name == "ggml-vocab-llama-bpe.gguf":
        from hf_support import hf_tokenizer

        e = hf_tokenizer("llama3").encode(text, add_special_tokens=options.get("addSpecialTokens", False))
        return list(e.ids), [tuple(o) for o in e.offsets]
    if name == "ggml-vocab-bert-bge.gguf":
        from hf_support import hf_tokenizer

        e = hf_tokenizer("minilm").encode(text, add_special_tokens=options.get("addSpecialTokens", False))
        return list(e.ids), [tuple(o) for o in e.offsets]
    if name.endswith(".gguf"):
        from anytok.gguf import load_gguf

        tok = load_gguf(file_bytes(name), name=name)
        return tok.encode_with_offsets(text, add_special_tokens=options.get("addSpecialTokens", False))
    tok = native_tokenizer(name)
    if isinstance(tok, anytok.Encoding):
        return tok.encode_with_offsets(text, allowed_special="all")
    return tok.encode_with_offsets(text, add_special_tokens=options.get("addSpecialTokens", False))


JS_OFFSETS = """async ([name, url, text, options]) => {
    const tok = url ? await AnyTok.load({ url }) : await AnyTok.load({ encoding: name });
    const got = await tok.encode(text, { ...options, offsets: true });
    const pieces = await tok.tokenize(text, options);
    return { kind: tok.kind, ids: got.ids, offsets: got.offsets, plain: await tok.encode(text, options),
             pieces: pieces.map((p) => [p.start, p.end, p.ids, p.exact]) };
}"""


@pytest.mark.parametrize("name", list(FILES))
def test_page_offsets_equal_native(shim, name):  # noqa: F811
    text, options = FILES[name]
    url = None
    if name != "o200k_base":
        serve_files(shim, {name: file_bytes(name)})
        url = f"/test-models/{name}"
    got = shim.evaluate(JS_OFFSETS, [name, url, text, options])
    ids, offsets = native_offsets(name, text, options)
    assert got["ids"] == list(ids) == got["plain"]
    assert got["offsets"] == utf16(text, offsets)
    assert any(e - s == 2 for s, e in got["offsets"]), "an astral character is one token's whole span"
    # The token view's pieces: in order, covering the text, each token's span inside its piece.
    pieces = got["pieces"]
    assert pieces[0][0] == 0 and pieces[-1][1] == len(text.encode("utf-16-le")) // 2
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    assert [i for p in pieces for i in p[2]] == got["ids"]
    assert all(p[3] for p in pieces)
    k = 0
    for start, end, piece_ids, _ in pieces:
        for _ in piece_ids:
            s, e = got["offsets"][k]
            assert e == s or start <= s <= e <= end, (name, k)
            k += 1


def test_demo_token_view_shows_the_exact_spans(demo_profile, demo_url):  # noqa: F811
    page = demo_profile.new_page()
    try:
        page.goto(demo_url)
        wait_status(page)
        text = "ab \U0001F600\u9f98 e\u0301!"
        page.fill("#text", text)
        page.wait_for_function(
            "(n) => document.querySelectorAll('#tokens .t').length > 0 && window.anytokDemo?.lastUpdate?.total === n",
            arg=len(native_offsets("o200k_base", text, {})[0]))
        spans = page.evaluate("""() => [...document.querySelectorAll('#tokens .t')].map((t) => {
            t.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
            return [t.dataset.ids, Number(t.dataset.s), Number(t.dataset.e), Number(t.dataset.b),
                    document.getElementById('inspect').textContent];
        })""")
    finally:
        page.close()
    demo_profile.guard.check()
    import anytok

    enc = anytok.get_encoding("o200k_base")
    ids, offsets = enc.encode_with_offsets(text)
    shown = [(int(i), s, e) for ids_, s, e, _, _ in spans for i in ids_.split()]
    # Each token (or each id of a split character) shows the character span native gives it.
    assert [(i, s, e) for i, s, e in shown] == [(i, s, e) for i, (s, e) in zip(ids, offsets)]
    for ids_, s, e, b, inspect in spans:
        assert f"characters {s}–{e}" in inspect and ids_.split()[0] in inspect and f"{b} byte" in inspect


@pytest.mark.parametrize("name", ["minilm.tokenizer.json", "ggml-vocab-bert-bge.gguf"])
def test_demo_token_view_of_a_normalized_pipeline_is_its_offsets(demo_profile, demo_url, name):  # noqa: F811
    # MiniLM: Bert normalizer (lowercase, accents stripped) and WordPiece; spaces are in no token.
    # Its GGUF (llama.cpp's WPM, which reports no offsets) shows the same spans.
    text = "Caf\u00e9 NA\u00cfVE  \U0001F600 \uFB01ne,x"
    ids, offsets = native_offsets(name, text, {})
    page = demo_profile.new_page()
    try:
        page.goto(demo_url)
        wait_status(page)
        mime = "application/octet-stream" if name.endswith(".gguf") else "application/json"
        page.set_input_files("#tokenizer-file", files=[{"name": name, "mimeType": mime, "buffer": file_bytes(name)}])
        page.wait_for_function(f"document.querySelector('#encoding').value === 'file:{name}'")
        wait_status(page)
        page.fill("#text", text)
        page.wait_for_function("(n) => window.anytokDemo?.lastUpdate?.total === n && document.querySelectorAll('#tokens .t').length",
                               arg=len(ids))
        shown = page.evaluate("""() => [...document.querySelectorAll('#tokens .seg > span')].map((t) =>
            t.classList.contains('gap') ? ['gap', t.textContent] : [t.dataset.ids, +t.dataset.s, +t.dataset.e])""")
    finally:
        page.close()
    demo_profile.guard.check()
    # Code points: the view's spans are in code points, as Python counts.
    assert [int(i) for kind, *_ in shown if kind != "gap" for i in kind.split()] == ids
    # each piece is the union of its tokens' native spans (tokens sharing characters are one piece)
    k = 0
    for kind, *rest in shown:
        if kind == "gap":
            continue
        s, e = rest
        n = len(kind.split())
        group = offsets[k:k + n]
        assert (min(a for a, _ in group), max(b for _, b in group)) == (s, e), (kind, group, s, e)
        k += n
    gaps = [rest[0] for kind, *rest in shown if kind == "gap"]
    assert gaps and all(set(g) <= {"·", " "} for g in gaps), gaps


def test_constrain_view_shows_partial_characters_as_bytes(demo_profile, demo_url):  # noqa: F811
    # Issue #45: a token holding part of a character's UTF-8 bytes is listed as those bytes
    # (<0xE9>), as the Count view shows it, not as "�".
    from anytok import constrain
    import anytok

    page = demo_profile.new_page()
    try:
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.goto(demo_url)
        wait_status(page)
        page.click("#view-constrain")
        page.select_option("#constrain-kind", "regex")
        page.fill("#constrain-spec", "\u9f98!")
        page.click("#constrain-start")
        page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
        listed = page.eval_on_selector_all("#constrain-allowed button", "bs => bs.map((b) => [+b.dataset.id, b.textContent])")
    finally:
        page.close()
    demo_profile.guard.check()
    enc = anytok.get_encoding("o200k_base")
    allowed = constrain.regex("\u9f98!").matcher(enc).allowed()
    assert sorted(i for i, _ in listed) == sorted(allowed)
    for i, label in listed:
        want = "".join(f"<0x{b:02X}>" for b in enc.decode_single_token_bytes(i))
        assert label == want, (i, label)


def test_lone_surrogates_keep_their_place(shim):  # noqa: F811
    # A lone surrogate is U+FFFD for the ids (as tiktoken) and one UTF-16 unit of the text.
    import anytok

    text = "a\ud800b\U0001F600\udc00 c"
    got = shim.evaluate(
        """async ([text]) => {
            const tok = await AnyTok.load({ encoding: "o200k_base" });
            return await tok.encode(text, { offsets: true });
        }""",
        [text],
    )
    ids, offsets = anytok.get_encoding("o200k_base").encode_with_offsets(text)
    assert got == {"ids": ids, "offsets": utf16(text, offsets)}
    assert got["offsets"][-1][1] == 8  # JavaScript's length of the text


def _label(data: bytes) -> str:
    """How every view labels a token from its own bytes (web/visible.js tokenLabel): its text when
    they are whole UTF-8 characters, else each byte as <0xE5>."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(f"<0x{b:02X}>" for b in data)


BYTE_TEXT = "a \u9f98!\u9f98"
BYTE_PATTERN = "\u9f98\u6210!"


def _count_and_constrain(page, name: str, n_ids: int):
    """Open tokenizer file `name` in the page, count BYTE_TEXT, then step through BYTE_PATTERN in
    Constrain by the first allowed token: (the Count view's tokens, each step's allowed list,
    the output)."""
    page.click("#view-count")
    page.set_input_files("#tokenizer-file", files=[{"name": name, "mimeType": "application/octet-stream",
                                                    "buffer": file_bytes(name)}])
    page.wait_for_function(f"document.querySelector('#encoding').value === 'file:{name}'")
    wait_status(page)
    page.fill("#text", BYTE_TEXT)
    page.wait_for_function("(n) => window.anytokDemo?.lastUpdate?.total === n && document.querySelectorAll('#tokens .t').length",
                           arg=n_ids)
    count_view = page.evaluate("""() => [...document.querySelectorAll('#tokens .t')].map((t) =>
        [t.dataset.ids, t.classList.contains('byte'), t.querySelector('.tx').textContent])""")
    page.click("#view-constrain")
    page.select_option("#constrain-encoding", f"file:{name}")
    page.select_option("#constrain-kind", "regex")
    page.fill("#constrain-spec", BYTE_PATTERN)
    page.click("#constrain-start")
    page.wait_for_function("window.anytokConstrainDemo.state === 'ready'")
    steps = []
    for _ in range(12):
        listed = page.eval_on_selector_all("#constrain-allowed button", "bs => bs.map((b) => [+b.dataset.id, b.textContent])")
        steps.append(listed)
        first = next((i for i, label in listed if label != "⟨end⟩"), None)
        if first is None:  # the end of sequence only: the regex is matched
            break
        before = page.evaluate("window.anytokConstrainDemo.tokens.length")
        page.click(f"#constrain-allowed button[data-id='{first}']")
        page.wait_for_function("(n) => window.anytokConstrainDemo.tokens.length > n && window.anytokConstrainDemo.state === 'ready'",
                               arg=before)
    output = page.eval_on_selector_all("#constrain-output .t", "ts => ts.map((t) => t.textContent)")
    return count_view, steps, output


def test_byte_tokens_are_labelled_as_bytes_in_count_and_constrain_for_files(demo_profile, demo_url):  # noqa: F811
    # Issue #45: a SentencePiece byte-fallback model (<0xE9> pieces) and a byte-level
    # tokenizer.json (Llama 3: " \xe9\xbe" and "\x98") label a token holding part of a character
    # by its bytes, the same way in the Count view's tokens and Constrain's allowed list, from
    # the bytes the constraint engine reads (token_env()).
    from anytok import constrain
    names = ["mistral_instruct_tokenizer_240323.model.v3", "llama3.tokenizer.json"]
    toks = {name: native_tokenizer(name) for name in names}
    page = demo_profile.new_page()
    errors = []
    got = {}
    try:
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(demo_url)
        wait_status(page)
        for name in names:
            got[name] = _count_and_constrain(page, name, len(toks[name].encode(BYTE_TEXT)))
    finally:
        page.close()
    demo_profile.guard.check()
    assert errors == []

    for name in names:
        tok = toks[name]
        env = tok.token_env().token_bytes
        count_view, steps, output = got[name]
        # Count view: every id in order; a token of part of a character shows its bytes.
        ids = tok.encode(BYTE_TEXT)
        assert [int(i) for ids_, _, _ in count_view for i in ids_.split()] == ids
        byte_tokens = [(int(ids_), label) for ids_, is_byte, label in count_view if is_byte]
        partial = [i for i in ids if _label(env[i]).startswith("<0x")]
        assert len(partial) >= 2 and [i for i, _ in byte_tokens] == partial, (name, byte_tokens, partial)
        for i, label in byte_tokens:
            assert label == _label(env[i]), (name, i, label)

        # Constrain: the allowed tokens of each step are native's, labelled by the same rule.
        m = constrain.regex(BYTE_PATTERN).matcher(tok)
        taken = []
        for listed in steps:
            assert sorted(i for i, _ in listed) == sorted(m.allowed()), name
            for i, label in listed:
                if i in env:
                    assert label == _label(env[i]), (name, i, label)
            first = next((i for i, label in listed if label != "⟨end⟩"), None)
            if first is None:
                break
            assert m.consume(first)
            taken.append(first)
        assert first is None and m.is_accepting()
        assert any(_label(env[i]).startswith("<0x") for i in taken)
        assert output == [_label(env[i]) for i in taken]
        assert b"".join(env[i] for i in taken).decode() == BYTE_PATTERN


def test_token_bytes_are_the_constraint_engines_for_every_family(shim):  # noqa: F811
    # tok.tokenBytes(ids): each token's bytes as anytok.constrain reads them (token_env()), or a
    # special token's name, for an encoding, tekken, a byte-fallback tokenizer.json, a
    # SentencePiece .model and a GGUF vocabulary.
    import random

    import anytok
    from anytok.gguf import load_gguf

    # (Llama 3's byte-level tokenizer.json: in the test above.)
    names = ["o200k_base", "tekken_240911.json", "llama2.tokenizer.json", "mistral_instruct_tokenizer_240323.model.v3",
             "ggml-vocab-llama-spm.gguf"]
    rng = random.Random(45)
    for name in names:
        if name == "o200k_base":
            tok = anytok.get_encoding(name)
        elif name.endswith(".gguf"):
            tok = load_gguf(file_bytes(name), name=name)
        else:
            tok = native_tokenizer(name)
        env = tok.token_env()
        specials = sorted(set(env.special_names.values()) | ({env.eos} if env.eos is not None else set()))
        ordinary = sorted(env.token_bytes)
        ids = rng.sample(ordinary, 150) + specials[:20] + tok.encode("a \u9f98\U0001F600 caf\u00e9")
        url = None
        if name != "o200k_base":
            serve_files(shim, {name: file_bytes(name)})
            url = f"/test-models/{name}"
        got = shim.evaluate(
            """async ([name, url, ids]) => {
                const tok = url ? await AnyTok.load({ url }) : await AnyTok.load({ encoding: name });
                return (await tok.tokenBytes(ids)).map((b) => typeof b === "string" ? ["name", b] : ["bytes", Array.from(b)]);
            }""",
            [name, url, ids],
        )
        for i, (what, value) in zip(ids, got):
            if i in env.token_bytes:
                assert (what, bytes(value)) == ("bytes", env.token_bytes[i]), (name, i)
            else:
                if isinstance(tok, anytok.Encoding):
                    want = tok.decode_single_token_bytes(i).decode()
                elif name.endswith(".gguf"):
                    want = tok.vocab.tokens[i]
                elif name.endswith(".json"):
                    want = tok.id_to_token(i)
                else:
                    want = tok.pieces[i]
                assert (what, value) == ("name", want), (name, i)
        assert len(got) == len(ids)
