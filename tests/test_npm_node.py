"""The npm package (build_scripts/build_npm.py) under Node, as docs/browser.md's "In Node" says:
a fresh folder installs the tarball offline (`npm install --offline`, no registry, nothing
fetched), and

  (a) a Node script imports `anytok` and prints what it computes: o200k_base, cl100k_base and
      the encodings the package derives from a base vocabulary (o200k_harmony, gpt2, p50k_base,
      p50k_edit) against tiktoken's ids, decode, `load({ data })` of a small tokenizer.json against
      Hugging Face tokenizers' ids, offsets (a WordPiece GGUF's against tokenizers'), a `constrain` matcher's masks against native
      anytok.constrain's (which tests/test_constrain*.py hold equal to llguidance's), and
      `applyChatTemplate` (Llama 3.1's template, with tools; jinja2 in Node) against native
      `apply_chat_template` (which tests/test_chat.py holds equal to transformers');
  (b) a test file for Node's own runner (`node --test`, the vitest/jest style of a web app's
      tests; vitest itself would need the registry) asserts the same against expected values
      written into it.

Deno and Bun (which run worker.js in their own DOM-style Worker and read the package folder
by file: URLs) run the same script when ANYTOK_DENO / ANYTOK_BUN name their binaries (the npm
packages `deno` and `bun` fetch them from registry.npmjs.org; docs/browser.md has the command):
not in the default run, which would need ~150 MB of binaries.

Node has no DOM-style Worker: anytok.js starts worker.js in a `worker_threads` Worker
(node_worker.mjs) and reads every file from the package folder.  The scripts run with fetch
refused for anything but file: URLs, so a request to the network would fail the test."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import tiktoken_encoding
from test_chat import TOOLS

ROOT = Path(__file__).resolve().parents[1]
import build_npm  # noqa: E402

pytestmark = pytest.mark.xdist_group("npm")

TEXTS = [
    "Hello, world! naïve café — 日本語のテキスト, def f(x): return x ** 2\n",
    "  leading spaces\t\ttabs\r\n\r\nand 12345678 digits, 🤖🚀 emoji, ÅÄÖ",
    "<|endoftext|> is text here, and <|fim_prefix|> too",
    "def f(x):\n        if x:\n            return x  +   1\n" + " " * 30 + "end",  # p50k's runs of spaces
]
ENCODINGS = ["o200k_base", "cl100k_base", "o200k_harmony", "gpt2", "p50k_base", "p50k_edit"]
REGEX = "(yes|no), [0-9]{1,3}!"
SMALL_CORPUS = ["the quick brown fox jumps over the lazy dog", "a tokenizer of a few hundred tokens",
                "café naïve 日本語", "numbers 0123456789 and punctuation: ,.;!?"] * 5
SMALL_TEXT = "the lazy tokenizer jumps over 42 cafés"
OFFSETS_TEXT = "a 🤖 cafe\u0301 龘𠮷 x"
GGUF_MODELS = ROOT / ".cache" / "llama_cpp" / "models"
GGUFS = ["ggml-vocab-bert-bge.gguf", "ggml-vocab-nomic-bert-moe.gguf"]  # WordPiece, Unigram

# Refuses any fetch that is not of a file: URL before anytok is imported (the worker thread has
# its own fetch, node_worker.mjs's, which reads file: URLs only and hands others to Node's: the
# main thread's guard is what a page's network would be).
GUARD = """const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  if (!url.startsWith("file:")) throw new Error(`network request in the test: ${url}`);
  return realFetch(input, init);
};
"""

SCRIPT = """import { readFileSync } from "node:fs";
import { AnyTok } from "anytok";

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = { ids: {}, counts: {}, decoded: {} };
for (const name of input.encodings) {
  const tok = await AnyTok.load({ encoding: name });
  out.ids[name] = await Promise.all(input.texts.map((t) => tok.encode(t, { disallowedSpecial: [] })));
  out.counts[name] = await Promise.all(input.texts.map((t) => tok.count(t, { disallowedSpecial: [] })));
  out.decoded[name] = await Promise.all(out.ids[name].map((ids) => tok.decode(ids)));
}
const small = await AnyTok.load({ data: new TextEncoder().encode(input.tokenizerJson), fileName: "tokenizer.json" });
out.small = await small.encode(input.smallText);
// ids and UTF-16 offsets (astral characters, a character split between tokens, a special token)
out.offsets = { small: await small.encode(input.offsetsText, { offsets: true }) };
out.smallDecoded = await small.decode(out.small);
const o200k = await AnyTok.load({ encoding: "o200k_base" });
out.offsets.o200k = await o200k.encode(input.offsetsText + "<|endoftext|>", { offsets: true, allowedSpecial: "all" });
// GGUF WordPiece and Unigram files (llama.cpp gives no offsets; anytok makes them)
out.offsets.gguf = {};
for (const [name, path] of input.ggufs) {
  const tok = await AnyTok.load({ data: readFileSync(path), fileName: name });
  out.offsets.gguf[name] = await tok.encode(input.offsetsText, { offsets: true, addSpecialTokens: true });
}
const m = await o200k.constrain({ regex: input.regex });
out.masks = [Array.from(await m.mask())];
out.allowed = (await m.allowed()).length;
out.consumed = await m.consume(input.consume);
out.masks.push(Array.from(await m.mask()));
await m.free();
// A refused special token: an error in this API's words, the Python traceback only in its cause.
try {
  await o200k.encode("<|endoftext|> here");
} catch (e) {
  out.specialError = { message: e.message, name: e.name, cause: String(e.cause?.message ?? "") };
}
// A chat template (Llama 3.1's tokenizer_config.json) on the small tokenizer: jinja2 in Node.
const templ = await AnyTok.load({ data: input.tokenizerJson, config: input.chatConfig });
const chatOptions = { tools: input.tools, addGenerationPrompt: true };
out.templateText = await templ.applyChatTemplate(input.chat, { ...chatOptions, tokenize: false });
out.templateIds = await templ.applyChatTemplate(input.chat, chatOptions);
try {
  await templ.applyChatTemplate(input.chat, { chatTemplate: "{{ raise_exception('no chat here') }}" });
} catch (e) {
  out.templateError = e.message;
}
console.log(JSON.stringify(out));
AnyTok.terminate(); // (Deno's and Bun's workers keep the process alive until then; Node's do not)
"""

NODE_TEST = """import { test } from "node:test";
import assert from "node:assert/strict";
import { AnyTok } from "anytok";

const want = __WANT__;

test("o200k_base ids, counts and decode as tiktoken", async () => {
  const tok = await AnyTok.load({ encoding: "o200k_base" });
  for (const [text, ids] of want.o200k) {
    assert.deepEqual(await tok.encode(text, { disallowedSpecial: [] }), ids);
    assert.equal(await tok.count(text, { disallowedSpecial: [] }), ids.length);
    assert.equal(await tok.decode(ids), text);
  }
});

test("a derived encoding (o200k_harmony) as tiktoken", async () => {
  const tok = await AnyTok.load({ encoding: "o200k_harmony" });
  assert.deepEqual(await tok.encode(want.harmony[0], { allowedSpecial: "all" }), want.harmony[1]);
});

test("load({ data }) of a tokenizer.json as Hugging Face tokenizers", async () => {
  const tok = await AnyTok.load({ data: new TextEncoder().encode(want.tokenizerJson), fileName: "tokenizer.json" });
  assert.deepEqual(await tok.encode(want.small[0]), want.small[1]);
});

test("a constrain mask as native anytok.constrain", async () => {
  const tok = await AnyTok.load({ encoding: "o200k_base" });
  const m = await tok.constrain({ regex: want.regex });
  assert.deepEqual(Array.from(await m.mask()), want.mask);
  await m.free();
});

test("a bad constraint rejects with Python's error", async () => {
  const tok = await AnyTok.load({ encoding: "o200k_base" });
  await assert.rejects(tok.constrain({ regex: "(" }), (err) => err.name === "AnyTokError" && err.pythonType !== null);
});
"""


CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris, café?"}]


def _chat_config() -> Path:
    """Llama 3.1's tokenizer_config.json (its chat template), from build_scripts/fetch/fetch_chat.py."""
    from fetch_chat import fetch as fetch_chat

    return fetch_chat() / "llama3_1" / "tokenizer_config.json"


def _small_tokenizer_json() -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(SMALL_CORPUS, trainer)
    return tok.to_str()


def _native_masks():
    import anytok
    from anytok import constrain

    m = constrain.regex(REGEX).matcher(anytok.get_encoding("o200k_base"))
    masks = [list(memoryview(m.mask()).cast("I"))]
    allowed = m.allowed()
    return m, masks, allowed


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    npm = shutil.which("npm")
    node = shutil.which("node")
    assert npm and node, "npm and node are needed (build_scripts/test.sh installs them for the web assets)"
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert int(version.lstrip("v").split(".")[0]) >= 20, f"anytok's npm package needs Node >= 20, not {version}"
    tgz = build_npm.build(quiet=True, out=tmp_path_factory.mktemp("npm"))
    folder = tmp_path_factory.mktemp("node-app")
    (folder / "package.json").write_text(json.dumps({"name": "app", "private": True, "type": "module"}))
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home()), "npm_config_update_notifier": "false",
           "ANYTOK_CACHE_DIR": str(folder / "anytok-cache")}  # (not the user's ~/.cache/anytok)
    run = functools.partial(subprocess.run, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    r = run([npm, "install", "--offline", "--no-audit", "--no-fund", str(tgz)])
    assert r.returncode == 0, r.stdout + r.stderr
    return folder, run, node


# The runtimes the script runs under: Node always, Deno and Bun when their binaries are named.
RUNTIMES = ["node"] + [name for name, var in (("deno", "ANYTOK_DENO"), ("bun", "ANYTOK_BUN")) if os.environ.get(var)]


def _command(runtime: str, node: str) -> list[str]:
    if runtime == "node":
        return [node]
    binary = os.environ["ANYTOK_" + runtime.upper()]
    assert Path(binary).is_file(), f"ANYTOK_{runtime.upper()}={binary} is not a file"
    return [binary, "run", "--allow-read", "--allow-env"] if runtime == "deno" else [binary]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_node_script_gives_reference_ids(app, runtime):
    folder, run, node = app
    tokenizer_json = _small_tokenizer_json()
    ref, masks, allowed = _native_masks()
    consume = allowed[len(allowed) // 2]
    (folder / "input.json").write_text(json.dumps({
        "texts": TEXTS, "encodings": ENCODINGS, "tokenizerJson": tokenizer_json, "smallText": SMALL_TEXT,
        "regex": REGEX, "consume": consume, "offsetsText": OFFSETS_TEXT,
        "ggufs": [[name, str(GGUF_MODELS / name)] for name in GGUFS],
        "chatConfig": json.loads(_chat_config().read_text()), "chat": CHAT, "tools": TOOLS,
    }))
    (folder / "script.mjs").write_text(GUARD + SCRIPT)
    r = run([*_command(runtime, node), "script.mjs", "input.json"], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    for name in ENCODINGS:
        enc = tiktoken_encoding(name)
        want = [enc.encode(t, disallowed_special=()) for t in TEXTS]
        assert got["ids"][name] == want, name
        assert got["counts"][name] == [len(w) for w in want], name
        assert got["decoded"][name] == [enc.decode(w) for w in want], name
    import anytok
    from tokenizers import Tokenizer

    small = Tokenizer.from_str(tokenizer_json)
    assert got["small"] == small.encode(SMALL_TEXT).ids
    assert got["smallDecoded"] == small.decode(got["small"])
    # encode with offsets: tokenizers' offsets (code points) as UTF-16 indexes
    def utf16(text, offsets):
        return [[len(text[:a].encode("utf-16-le")) // 2, len(text[:b].encode("utf-16-le")) // 2] for a, b in offsets]

    e = small.encode(OFFSETS_TEXT)
    assert got["offsets"]["small"] == {"ids": e.ids, "offsets": utf16(OFFSETS_TEXT, e.offsets)}
    text = OFFSETS_TEXT + "<|endoftext|>"
    ids, offsets = anytok.get_encoding("o200k_base").encode_with_offsets(text, allowed_special="all")
    assert got["offsets"]["o200k"] == {"ids": ids, "offsets": utf16(text, offsets)}
    assert [2, 4] in got["offsets"]["o200k"]["offsets"]  # the robot: one astral character
    # the WordPiece GGUF as tokenizers on MiniLM's tokenizer.json (the same vocabulary); the
    # Unigram one as native (tests/test_gguf_offsets.py: sentencepiece's piece spans)
    from anytok.gguf import load_gguf
    from hf_support import hf_tokenizer

    e = hf_tokenizer("minilm").encode(OFFSETS_TEXT)
    assert got["offsets"]["gguf"][GGUFS[0]] == {"ids": e.ids, "offsets": utf16(OFFSETS_TEXT, e.offsets)}
    ids, offsets = load_gguf(GGUF_MODELS / GGUFS[1]).encode_with_offsets(OFFSETS_TEXT, add_special_tokens=True)
    assert got["offsets"]["gguf"][GGUFS[1]] == {"ids": ids, "offsets": utf16(OFFSETS_TEXT, offsets)}
    assert got["allowed"] == len(allowed)
    assert got["consumed"] is ref.consume(consume)
    masks.append(list(memoryview(ref.mask()).cast("I")))
    assert got["masks"] == masks
    # applyChatTemplate as native apply_chat_template (tests/test_chat.py: as transformers)
    import anytok

    (folder / "tokenizer.json").write_text(tokenizer_json)
    templ = anytok.load(str(folder / "tokenizer.json"), config=str(_chat_config()))
    assert got["templateText"] == templ.apply_chat_template(CHAT, tools=TOOLS, add_generation_prompt=True, tokenize=False)
    assert got["templateIds"] == templ.apply_chat_template(CHAT, tools=TOOLS, add_generation_prompt=True)
    assert got["templateError"] == "no chat here"
    # (native: tiktoken's ValueError naming allowed_special; in JS the option names are JS's)
    with pytest.raises(ValueError, match="allowed_special"):
        anytok.get_encoding("o200k_base").encode("<|endoftext|> here")
    err = got["specialError"]
    assert err["name"] == "AnyTokError" and '"<|endoftext|>"' in err["message"], err
    assert "allowedSpecial" in err["message"] and "disallowedSpecial" in err["message"], err
    assert "allowed_special" not in err["message"] and "Traceback" not in err["message"], err
    assert "Traceback" in err["cause"] and "allowed_special" in err["cause"], err


def test_node_test_runner_file(app):
    folder, run, node = app
    tokenizer_json = _small_tokenizer_json()
    o200k = tiktoken_encoding("o200k_base")
    harmony = tiktoken_encoding("o200k_harmony")
    harmony_text = "<|start|>user<|message|>What is 2 + 2?<|end|><|start|>assistant"
    _, masks, _ = _native_masks()
    from tokenizers import Tokenizer

    want = {
        "o200k": [[t, o200k.encode(t, disallowed_special=())] for t in TEXTS[:2]],
        "harmony": [harmony_text, harmony.encode(harmony_text, allowed_special="all")],
        "tokenizerJson": tokenizer_json,
        "small": [SMALL_TEXT, Tokenizer.from_str(tokenizer_json).encode(SMALL_TEXT).ids],
        "regex": REGEX,
        "mask": masks[0],
    }
    (folder / "anytok.test.mjs").write_text(GUARD + NODE_TEST.replace("__WANT__", json.dumps(want)))
    r = run([node, "--test", "--test-reporter=tap", "anytok.test.mjs"], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "# pass 5" in r.stdout and "# fail 0" in r.stdout, r.stdout


START = """import { AnyTok } from "anytok";
const tok = await AnyTok.load({ encoding: process.argv[2] ?? "o200k_base" });
const n = await tok.count("hello world");
const ids = await tok.encode(process.argv[3] ?? "");
console.log(JSON.stringify({ n, snapshot: tok.runtimeInfo.snapshot, source: tok.source, ids }));
"""


TRIE = """import { AnyTok } from "anytok";
const tok = await AnyTok.load({ encoding: "o200k_base", snapshot: false });
const m = await tok.constrain({ regex: process.argv[2] });
const masks = [Array.from(await m.mask())];
await m.consume(Number(process.argv[3]));
masks.push(Array.from(await m.mask()));
console.log(JSON.stringify({ trie: m.trie, masks }));
"""


def test_node_keeps_constraint_tries_in_the_cache_folder(app, tmp_path):
    """A Node process's first constraint over o200k_base builds the token trie and writes it to
    ANYTOK_CACHE_DIR: the file native anytok writes, byte for byte (constrain/trie_cache.py).
    A process finding native anytok's file there (with the slicer's parts) reads it.  Masks
    as native each time."""
    import anytok
    from anytok import constrain
    from anytok.constrain.slicer import Slicer
    from anytok.constrain.tokens import TokenTrie

    folder, run, node = app
    (folder / "trie.mjs").write_text(TRIE)
    enc = anytok.get_encoding("o200k_base")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANYTOK_CACHE_DIR", str(tmp_path / "native"))
        trie = TokenTrie.from_env(enc.token_env())
        name, = (p.name for p in (tmp_path / "native").iterdir())
        trie_only = (tmp_path / "native" / name).read_bytes()
        Slicer.of(trie)  # (the file rewritten with the slicer's parts)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "ANYTOK_CACHE_DIR": str(tmp_path / "node")}
    # the first: a constraint that needs no slicer (building it takes seconds more in Pyodide)
    for regex, text, expected in (("(yes|no), [0-9]{1,3}!", "yes", "built"), ('[^"]{0,12}"', " cat", "file")):
        native = constrain.regex(regex).matcher(enc)
        want = [list(memoryview(native.mask()).cast("I"))]
        token = enc.encode_single_token(text)
        assert native.consume(token)
        want.append(list(memoryview(native.mask()).cast("I")))
        r = run([node, "trie.mjs", regex, str(token)], env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        got = json.loads(r.stdout.strip().splitlines()[-1])
        assert got == {"trie": expected, "masks": want}
        if expected == "built":
            assert [p.name for p in (tmp_path / "node").iterdir()] == [name]
            assert (tmp_path / "node" / name).read_bytes() == trie_only
            (tmp_path / "node" / name).write_bytes((tmp_path / "native" / name).read_bytes())


def test_node_keeps_a_start_snapshot_on_disk(app, tmp_path):
    """A second Node process restores the start-up snapshot the first one kept in
    ANYTOK_CACHE_DIR (docs/browser.md#in-node-and-deno-bun), one per bundled encoding, which
    holds that encoding loaded (its ids then tiktoken's); a damaged one is left for a normal
    start; ANYTOK_CACHE_DIR=off keeps nothing."""
    folder, run, node = app
    (folder / "start.mjs").write_text(START)
    cache = tmp_path / "cache"
    text = TEXTS[0]

    def start(cache_dir, encoding="o200k_base") -> dict:
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "ANYTOK_CACHE_DIR": str(cache_dir)}
        r = run([node, "start.mjs", encoding, text], env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        got = json.loads(r.stdout.strip().splitlines()[-1])
        assert got.pop("ids") == tiktoken_encoding(encoding).encode(text), got
        return got

    made = {"n": 2, "snapshot": "made", "source": "network"}
    restored = {"n": 2, "snapshot": "restored", "source": "snapshot"}
    assert start(cache) == made
    stored = [p for p in cache.rglob("*") if p.is_file()]
    assert len(stored) == 2 and sum(p.stat().st_size for p in stored) > 1_000_000, stored
    assert start(cache) == restored
    body = max(stored, key=lambda p: p.stat().st_size)
    body.write_bytes(body.read_bytes()[: body.stat().st_size // 2])  # damaged: checksum fails
    assert start(cache) == made
    assert start(cache) == restored
    # Snapshots of other versions, unused for long: at most four snapshots are kept, the least
    # recently used removed first.
    where = body.parent  # the snapshot cache's own folder
    for k in range(3):
        (where / f"{k:064x}.json").write_text("{}")
        (where / f"{k:064x}").write_bytes(b"old")
        os.utime(where / f"{k:064x}", (1e9 + k, 1e9 + k))
    # Another encoding: a snapshot of its own (o200k_base's is not restored for it).
    assert start(cache, "cl100k_base") == made
    kept = {p.name for p in where.iterdir()}
    assert len(kept) == 8 and f"{0:064x}" not in kept and f"{0:064x}.json" not in kept, kept
    assert {f"{1:064x}", f"{2:064x}"} <= kept
    for k in (1, 2):
        (where / f"{k:064x}").unlink()
        (where / f"{k:064x}.json").unlink()
    assert len([p for p in cache.rglob("*") if p.is_file()]) == 4
    assert start(cache, "cl100k_base") == restored
    assert start("off") == {"n": 2, "snapshot": "off", "source": "network"}
    assert not (tmp_path / ".cache").exists()
