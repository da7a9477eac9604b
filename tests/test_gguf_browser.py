"""GGUF model files in the page: `AnyTok.load({ file })` with a File reads only the header's
bytes and gives the ids llama.cpp's tests expect (the `.out` files of its test-tokenizer-0) and
native anytok gives; the demo's "Open tokenizer file…" takes a .gguf.

The File is the real llama.cpp vocabulary file followed by 64 MiB of zeros standing for the
weights, with `Blob.prototype.slice` and the whole-Blob readers instrumented in the page to record
what was read of it.  The GGUFs are served to the page by a Playwright route (never the network).
"""

from __future__ import annotations

import pytest

from browser_support import demo_context, wait_status
from test_gguf import MODELS, read_cases

import anytok
from anytok import VocabFormatError
from anytok.gguf.header import read_gguf_header
from anytok.gguf import load_gguf

pytestmark = pytest.mark.xdist_group("browser")

PADDING_MIB = 64
FIRST_READ = 1 << 20  # anytok.js's first slice of a GGUF file
NAMES = ["ggml-vocab-llama-spm.gguf", "ggml-vocab-llama-bpe.gguf"]  # SPM and BPE (Llama 3)


@pytest.fixture(scope="module")
def page():
    with demo_context() as (ctx, url):
        pg = ctx.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        # The fixtures, for the page to make Files of (a page route: answered here, never sent).
        pg.route("**/__gguf__/*", lambda route: route.fulfill(
            status=200, body=(MODELS / route.request.url.rsplit("/", 1)[1]).read_bytes(),
            headers={"Content-Type": "application/octet-stream"}))
        pg.goto(url)
        wait_status(pg)
        pg.evaluate(
            """async () => {
                const { AnyTok } = await import('/anytok.js');
                window.AnyTok = AnyTok;
                // What is read of the Blobs in window.watched: slice ranges, whole-Blob reads.
                window.watched = new Set();
                window.reads = [];
                const slice = Blob.prototype.slice;
                Blob.prototype.slice = function (start, end, type) {
                    if (window.watched.has(this)) window.reads.push([start ?? 0, end ?? this.size]);
                    return slice.call(this, start, end, type);
                };
                for (const name of ['arrayBuffer', 'text', 'stream', 'bytes']) {
                    const own = Blob.prototype[name];
                    if (!own) continue;
                    Blob.prototype[name] = function (...args) {
                        if (window.watched.has(this)) window.reads.push(['whole', name]);
                        return own.apply(this, args);
                    };
                }
                window.ggufFile = async (name, edit = null) => {
                    const head = new Uint8Array(await (await fetch('/__gguf__/' + name)).arrayBuffer());
                    if (edit) for (const [at, byte] of edit) head[at] = byte;
                    const zeros = new Uint8Array(1 << 20);
                    const parts = [head];
                    for (let i = 0; i < %d; i++) parts.push(zeros);
                    const file = new File(parts, name);
                    window.watched.add(file);
                    window.reads = [];
                    return file;
                };
            }"""
            % PADDING_MIB
        )
        yield pg
        assert errors == [], errors


@pytest.mark.parametrize("name", NAMES)
def test_load_from_a_file_reads_only_the_header(page, name):
    native = anytok.load(MODELS / name)
    cases = read_cases(name)
    texts = [t for t, _ in cases]
    extra = ["Hello world", " leading space", "<s> not a control token </s>", "Café 日本語 🦙\n\n\tend"]
    got = page.evaluate(
        """async ([name, texts, extra]) => {
            const file = await window.ggufFile(name);
            const started = performance.now();
            const tok = await window.AnyTok.load({ file });
            const loadMs = performance.now() - started;
            const reads = window.reads.slice();
            const ids = [];
            for (const t of texts) ids.push(await tok.encode(t));
            const special = [];
            for (const t of extra) special.push(await tok.encode(t, { addSpecialTokens: true }));
            const counts = [];
            for (const t of extra) counts.push(await tok.count(t));
            const decoded = await tok.decode(special[0]);
            return { ids, special, counts, decoded, reads, loadMs, kind: tok.kind, name: tok.name, nVocab: tok.nVocab,
                     size: file.size };
        }""",
        [name, texts, extra],
    )
    # llama.cpp's expected ids, and native anytok's.
    assert got["ids"] == [ids for _, ids in cases]
    assert got["ids"] == [native.encode(t) for t in texts]
    assert got["special"] == [native.encode(t, add_special_tokens=True) for t in extra]
    assert got["counts"] == [native.count(t) for t in extra]
    assert got["decoded"] == native.decode(native.encode(extra[0], add_special_tokens=True))
    assert got["kind"] == "gguf" and got["name"] == name[: -len(".gguf")] and got["nVocab"] == native.n_vocab

    # Only the header: slices from the start, each where the last ended, up to the first read
    # or twice the header at most; never the whole file.
    header_end = read_gguf_header(MODELS / name).kv_end
    reads = got["reads"]
    assert all(r[0] != "whole" for r in reads), reads
    assert reads[0][0] == 0 and all(a[1] == b[0] for a, b in zip(reads, reads[1:])), reads
    assert reads[-1][1] >= header_end
    assert reads[-1][1] <= max(FIRST_READ, 2 * header_end) < got["size"] - (PADDING_MIB - 20) * (1 << 20)


def test_a_damaged_header_is_named_as_natively(page):
    name = "ggml-vocab-llama-spm.gguf"
    data = bytearray((MODELS / name).read_bytes())
    header = read_gguf_header(bytes(data))
    # The token list's count (u64 after its key, type and element type) set to 2^40.
    key = b"tokenizer.ggml.tokens"
    at = data.index(key) + len(key) + 4 + 4
    assert int.from_bytes(data[at:at + 8], "little") == len(header.kv["tokenizer.ggml.tokens"])
    edit = [(at + 5, 1)]
    for i, b in edit:
        data[i] = b
    data += bytes(PADDING_MIB << 20)
    with pytest.raises(VocabFormatError) as native:
        load_gguf(bytes(data), what=name)
    got = page.evaluate(
        """async ([name, edit]) => {
            const file = await window.ggufFile(name, edit);
            try {
                await window.AnyTok.load({ file });
                return null;
            } catch (err) {
                return { type: err.pythonType, message: err.message, reads: window.reads };
            }
        }""",
        [name, edit],
    )
    assert got is not None and got["type"] == "VocabFormatError"
    assert str(native.value) in got["message"], (str(native.value), got["message"])
    assert "cannot fit" in got["message"]
    assert got["reads"] == [[0, FIRST_READ]]


def test_demo_opens_a_gguf(page):
    name = "ggml-vocab-llama-spm.gguf"
    native = anytok.load(MODELS / name)
    data = (MODELS / name).read_bytes()
    page.set_input_files("#tokenizer-file", files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}])
    page.wait_for_function(f"document.querySelector('#encoding').value === 'file:{name}'")
    wait_status(page)
    sample = page.input_value("#text")
    assert int(page.get_attribute("#count", "data-count")) == native.count(sample)
    shown = page.evaluate("Array.from(document.querySelectorAll('#tokens .t'), (t) => t.dataset.ids).join(' ')")
    assert [int(i) for i in shown.split()] == native.encode(sample)
    # (good news, shown as such: in the info box, not among the warnings)
    assert f"Loaded {name}: GGUF (llama.cpp) tokenizer" in page.text_content("#info")
    assert name not in (page.text_content("#notice") or "")


def test_constrain_in_the_page(page):
    # anytok.constrain on a GGUF tokenizer in the worker: the masks and forced tokens native
    # anytok gives (tests/test_gguf_constrain.py checks those against llguidance)
    from anytok import constrain

    name = "ggml-vocab-llama-spm.gguf"
    native = anytok.load(MODELS / name)
    pattern = r"(yes|no), [0-9]{2,4}!"
    got = page.evaluate(
        """async ([name, pattern]) => {
            const tok = await window.AnyTok.load({ file: await window.ggufFile(name) });
            const m = await tok.constrain({ regex: pattern });
            const steps = [];
            for (let i = 0; i < 6; i++) {
                const allowed = await m.allowed();
                steps.push({ allowed, forced: await m.forced(), accepting: await m.isAccepting() });
                if (!allowed.length || await m.isStopped()) break;
                await m.consume(allowed[(7 * i + 3) % allowed.length]);
            }
            await m.free();
            return steps;
        }""",
        [name, pattern],
    )
    m = constrain.regex(pattern).matcher(native)
    assert len(got) >= 3
    for i, step in enumerate(got):
        allowed = m.allowed()
        assert step == {"allowed": allowed, "forced": m.forced(), "accepting": m.is_accepting()}, i
        if not allowed or m.is_stopped():
            break
        assert m.consume(allowed[(7 * i + 3) % len(allowed)])
