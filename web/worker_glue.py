"""anytok's side of the Web Worker (web/worker.js): anytok's public API, keyed by tokenizer.

The worker imports this module once and calls its functions with values Pyodide converted from
JavaScript: `str` for strings, numbers for numbers, and JsProxy objects for arrays and
`Uint8Array`s, which `_py` turns into Python values.  Ids go back as `array('i')`, which the
worker reads as one Int32Array instead of converting a list element by element.

A tokenizer is whatever `anytok.load` makes of a file's bytes: an `anytok.Encoding`
(tiktoken-style: an .atok vocabulary, a tekken JSON), a Hugging Face pipeline (tokenizer.json,
or an .atok holding one) or a SentencePiece model (.model, or an .atok holding one).  Every
function works for all three; the options that belong to one kind only (`allowed_special` /
`disallowed_special` for encodings, `add_special_tokens` for the others) are refused with a
clear message when given for another kind.

It knows nothing of the browser beyond that, and nothing of anytok beyond its public API.
"""

from __future__ import annotations

import json
import os
from array import array
from operator import itemgetter

import anytok
from anytok.files import tokenizer_from_bytes, tokenizer_to_bytes
from anytok import format as vocab_format

_tokenizers: dict[str, object] = {}
_surfaces: dict[str, dict[int, bytes | None]] = {}  # key -> id -> bytes of its text (tokenize)
_engine_bytes: dict[str, dict | None] = {}  # key -> id -> bytes as anytok.constrain reads them (token_bytes)

# Methods that only some versions of anytok have, and only its Encoding: the shim offers those
# the loaded tokenizer has.
OPTIONAL_METHODS = ("count_till_limit", "chunks", "split_by_tokens")


def _py(value):
    """A Python value for a JsProxy (Array, Uint8Array, ...); other values as they are."""
    if hasattr(value, "to_py"):
        return value.to_py()
    return value


def _ints(value) -> list[int]:
    if hasattr(value, "to_memoryview"):  # an Int32Array
        return value.to_memoryview().tolist()
    return list(_py(value))


def _bytes(value) -> bytes:
    if hasattr(value, "to_bytes"):
        return value.to_bytes()
    return bytes(value)


def _special(value):
    """"all", or a set of special token texts, from the JS option."""
    value = _py(value)
    if value is None:
        return None
    return value if value == "all" else set(value)


def _kind(tok) -> str:
    if isinstance(tok, anytok.Encoding):
        return "encoding"
    if getattr(tok, "vocab", None) is not None and type(tok).__name__ == "GGUFTokenizer":
        return "gguf"
    if hasattr(tok, "pieces") and hasattr(tok, "types"):
        return "sentencepiece"
    return "hf"


_KIND_NAMES = {"encoding": "a tiktoken-style encoding", "hf": "a Hugging Face tokenizer",
               "sentencepiece": "a SentencePiece tokenizer", "gguf": "a GGUF (llama.cpp) tokenizer"}


def _kwargs(tok, allowed, disallowed, add_special) -> dict:
    """encode()'s keyword arguments for this tokenizer, from the JS options."""
    kwargs = {}
    allowed, disallowed, add_special = _special(allowed), _special(disallowed), _py(add_special)
    if isinstance(tok, anytok.Encoding):
        if add_special is not None:
            raise ValueError(
                f"addSpecialTokens applies to Hugging Face and SentencePiece tokenizers; {tok.name} is "
                "a tiktoken-style encoding: use allowedSpecial / disallowedSpecial"
            )
        if allowed is not None:
            kwargs["allowed_special"] = allowed
        if disallowed is not None:
            kwargs["disallowed_special"] = disallowed
        return kwargs
    if allowed is not None or disallowed is not None:
        raise ValueError(
            f"allowedSpecial / disallowedSpecial apply to tiktoken-style encodings; {tok.name} is "
            f"{_KIND_NAMES[_kind(tok)]}: use addSpecialTokens"
        )
    if add_special is not None:
        kwargs["add_special_tokens"] = bool(add_special)
    return kwargs


def runtime() -> dict:
    import sys

    enc = anytok.Encoding
    return {
        "anytok": anytok.__version__,
        "python": sys.version.split()[0],
        "methods": [m for m in OPTIONAL_METHODS if hasattr(enc, m)],
        "compiled": _COMPILED if _COMPILED is not None else _compiled(),
    }


# --- after a restore from the start-up snapshot ---------------------------------------------
#
# A restored interpreter holds every module imported before the snapshot, but none of Python's
# files (the file system is not in the snapshot).  The worker gives the standard library again;
# anytok's own files (the wheel) are unpacked only when Python looks for a module the snapshot
# does not hold (the first `tok.constrain`, say), or once the worker is idle: unpacking them is
# off the way to the first count.

_COMPILED = None  # _compiled() as it was when the snapshot was made: what the modules in memory ran


def prepare_snapshot() -> None:
    """Called by the worker just before it makes the snapshot."""
    global _COMPILED
    _COMPILED = _compiled()


def preload(key: str, path: str, what: str, expected_name: str, derive=None) -> None:
    """Under Node, before the snapshot is made: the first vocabulary's file (written by the
    worker to `path`, removed here) loaded under `key` as `load` does, so that a snapshot holds
    the tokenizer and a restored worker needs no load.  Returns nothing: the snapshot may hold
    no object that JavaScript refers to."""
    import os

    try:
        with open(path, "rb") as f:
            data = f.read()
    finally:
        os.remove(path)
    load(key, data, what, expected_name, derive)


class _FilesOnDemand:
    """First on sys.meta_path after a restore: the first module Python looks for has the worker
    unpack anytok's files (`anytokInstallFiles`), and then the usual finders look for it."""

    def find_spec(self, name, path=None, target=None):
        install_files()
        return None


def files_on_demand() -> None:
    """Called by the worker right after a restore."""
    import sys

    sys.meta_path.insert(0, _FilesOnDemand())


def install_files() -> None:
    """Has the worker unpack anytok's files now (once), and takes the finder away."""
    import sys

    finders = [f for f in sys.meta_path if isinstance(f, _FilesOnDemand)]
    if not finders:
        return
    for f in finders:
        sys.meta_path.remove(f)
    import js

    js.anytokInstallFiles()


# --- parts fetched when first imported ------------------------------------------------------
#
# The first visit downloads only what a first count needs (build_web.py's STDLIB_START and
# ANYTOK_START); the rest of the standard library and of anytok are zips (the "lazy parts" of
# anytok-assets.json), fetched by the worker (`anytokFetchPart`, a synchronous request: an
# import cannot wait) and unpacked when Python first imports one of their modules.  The finder
# is last on sys.meta_path, so it is asked only about modules nothing else found, and it acts
# only for the modules a part lists: an optional import that is not there (`regex`) still fails
# at once, with nothing fetched.


class _LazyParts:
    def __init__(self, parts: list[dict]) -> None:
        self.parts = [{**p, "modules": frozenset(p["modules"]), "dir": None} for p in parts]

    def find_spec(self, name, path=None, target=None):
        for part in self.parts:
            if name in part["modules"]:
                if part["dir"] is None:
                    part["dir"] = _unpack_part(part)
                from importlib.machinery import PathFinder

                parent = name.rpartition(".")[0]
                where = part["dir"] + ("/" + parent.replace(".", "/") if parent else "")
                return PathFinder.find_spec(name, [where])
        return None


def _unpack_part(part: dict) -> str:
    """Fetches a part and unpacks it; the folder its top-level modules are in."""
    import importlib
    import io
    import os
    import sys
    import zipfile

    import js

    if part["root"] == "anytok":
        folder = os.path.dirname(anytok.__path__[0])  # next to anytok's own files
    else:
        folder = "/lib/anytok-lazy/" + part["root"]
    data = js.anytokFetchPart(part["url"]).to_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        zf.extractall(folder)
    if folder not in sys.path and part["root"] != "anytok":
        sys.path.append(folder)
    importlib.invalidate_caches()
    return folder


def lazy_parts(parts_json: str) -> None:
    """Called by the worker at every start (and after a restore): puts the finder of the parts
    anytok-assets.json lists last on sys.meta_path, in place of any earlier one."""
    import sys

    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _LazyParts)]
    sys.meta_path.append(_LazyParts(json.loads(parts_json)))


def _compiled() -> dict:
    """Whether the standard library and anytok run from the .pyc build_web.py compiled.

    stdlib: `json` came from a .pyc in the stdlib zip (the compiled zip has no .py at all).
    anytok: every imported anytok module has an unchecked hash-based .pyc in `__pycache__`
    with this interpreter's magic number and its source's hash, which CPython uses as it is, or
    (the modules fetched when first used) is a sourceless .pyc.
    glue: this module has a checked one (used because its source's hash matches)."""
    import importlib.util
    import json
    import sys

    def used(module, flags: int) -> bool:
        if (module.__file__ or "").endswith(".pyc"):  # sourceless (anytok's lazily fetched part)
            return flags == 1 and module.__spec__.loader.__class__.__name__ == "SourcelessFileLoader"
        try:
            with open(module.__cached__, "rb") as f:
                head = f.read(16)
            with open(module.__file__, "rb") as f:
                source = f.read()
        except (OSError, TypeError):
            return False
        return (head[:4] == importlib.util.MAGIC_NUMBER and head[4:8] == bytes([flags, 0, 0, 0])
                and head[8:16] == importlib.util.source_hash(source))

    mods = [m for name, m in list(sys.modules.items()) if name == "anytok" or name.startswith("anytok.")]
    return {
        "stdlib": (json.__spec__.origin or "").endswith(".pyc"),
        "anytok": bool(mods) and all(used(m, 1) for m in mods),
        "glue": used(sys.modules[__name__], 3),
    }


def _retitle(err: Exception, what: str) -> Exception:
    """The same exception, naming the file instead of anytok.load's "tokenizer data"."""
    message = str(err)
    if "tokenizer data" not in message:
        return err
    try:
        return type(err)(message.replace("tokenizer data", what, 1))
    except Exception:
        return err


def _other_format(data: bytes) -> bool:
    """Whether data may be a file anytok.load reads other than .atok (JSON, a protobuf, a
    .tiktoken file's "base64 rank" lines)."""
    head = data[:4096].lstrip()
    first = head.split(b"\n", 1)[0].split()
    return head.startswith(b"{") or data[:1] == b"\x0a" or (len(first) == 2 and first[1].isdigit())


def load(key: str, data, what: str, expected_name, derive=None, file_size=None, config=None) -> dict:
    """Build a tokenizer from a file's bytes, whatever its format; `key` names it from now on.

    An .atok file of any kind, a tokenizer.json, a SentencePiece .model or a tekken JSON:
    as `anytok.load` reads them.  A file that holds no name is named after `what` (its file
    name without extensions).  `derive` (JSON, the manifest's "derive" of a bundled encoding):
    the encoding is that .atok file's tokens with these fields (anytok.format.derive), as
    o200k_harmony is made from o200k_base.atok.  A GGUF model file comes as its header's bytes
    only (what anytok.js read of it) with `file_size` the whole file's size.  `config`: the text
    of a tokenizer_config.json (JSON), whose chat template `chat_template` applies (as
    `anytok.load(..., config=...)` natively)."""
    data = _bytes(data)
    if derive is not None:
        if not data.startswith(vocab_format.MAGIC):
            raise anytok.VocabFormatError(f"{what}: not an anytok vocab file, which a derived encoding needs")
        with anytok.registry.gc_paused():
            vocab = vocab_format.loads(data, what, check_duplicates=False)
            what = f"{what} (as {expected_name})"
            tok = anytok.Encoding._from_vocab(vocab_format.derive(vocab, json.loads(derive), what), what)
    elif data[:4] == b"GGUF":
        from anytok.gguf import load_gguf

        stem = what.rsplit("/", 1)[-1]
        stem = stem[:-5] if stem.lower().endswith(".gguf") else stem
        tok = load_gguf(data, name=stem if stem and what != "vocab file" else None, what=what,
                        size=None if file_size is None else int(file_size))
    elif data.startswith(vocab_format.MAGIC):
        tok = tokenizer_from_bytes(data, what)
    elif not _other_format(data):
        raise anytok.VocabFormatError(
            f"{what}: not an anytok vocab file, nor a tokenizer.json, a SentencePiece .model or a tekken .json"
        )
    else:
        stem = what.rsplit("/", 1)[-1].split(".")[0]
        try:
            tok = anytok.load(data, name=stem if stem and what != "vocab file" else None)
        except Exception as err:
            raise _retitle(err, what) from None
    if expected_name is not None and tok.name != expected_name:
        raise anytok.VocabFormatError(f"{what}: holds encoding {tok.name!r}, not {expected_name!r}")
    if config is not None:
        _attach_config(tok, config, what)
    _tokenizers[key] = tok
    _surfaces.pop(key, None)
    _engine_bytes.pop(key, None)
    return info(key)


def loaded(key: str) -> bool:
    return key in _tokenizers


def _tok(key: str):
    try:
        return _tokenizers[key]
    except KeyError:
        raise ValueError(f"tokenizer {key!r} is not loaded in this worker") from None


def _special_tokens(tok) -> list[str]:
    if hasattr(tok, "special_tokens_set"):
        return sorted(tok.special_tokens_set)
    # SentencePiece: its control pieces (<s>, </s>, [INST], ...); encode never matches them
    # in text, and add_special_tokens adds BOS.
    return sorted(p for p, t in zip(tok.pieces, tok.types) if t == _SP_CONTROL)


def info(key: str) -> dict:
    tok = _tok(key)
    kind = _kind(tok)
    return {
        "name": tok.name,
        "kind": kind,
        "nVocab": tok.n_vocab,
        "maxTokenValue": tok.max_token_value if kind == "encoding" else tok.n_vocab - 1,
        "specialTokens": _special_tokens(tok),
        "methods": [m for m in OPTIONAL_METHODS if hasattr(tok, m)],
        "pattern": tok.pat_str if kind == "encoding" else None,
        "chatTemplate": _has_template(tok),
    }


def encode(key: str, text: str, allowed, disallowed, add_special=None) -> array:
    tok = _tok(key)
    return array("i", tok.encode(text, **_kwargs(tok, allowed, disallowed, add_special)))


def count(key: str, text: str, allowed, disallowed, add_special=None) -> int:
    tok = _tok(key)
    return tok.count(text, **_kwargs(tok, allowed, disallowed, add_special))


def window(key: str, block: str, overlap: str, final: bool, with_ids: bool, check_special: bool):
    """One block of a text that several workers encode or count together (anytok.stream):
    the block's summary, with the ids of its pieces if `with_ids`.  None when special-token
    text is in the block or the overlap and `check_special` (the page then encodes the whole
    text in one worker, which raises or encodes it as asked); a special token cut by the block
    boundary lies in the block plus its overlap, so every one is seen."""
    from anytok import stream
    from anytok.core import Encoding, _special_token_regex

    tok = _tok(key)
    if not isinstance(tok, Encoding):
        raise TypeError("parallel windows are for tiktoken-style encodings")
    specials = tok.special_tokens_set
    if check_special and specials and _special_token_regex(frozenset(specials)).search(block + overlap):
        return None
    w = (stream.encode_window if with_ids else stream.summarize)(tok, block, overlap, bool(final))
    return {
        "ids": array("i", w.ids) if with_ids else None,
        "headOffsets": array("i", w.head_offsets), "headCounts": array("i", w.head_counts),
        "tailOffsets": array("i", w.tail_offsets), "tailCounts": array("i", w.tail_counts),
        "total": w.total,
    }


def clear_piece_cache(key: str) -> int:
    """Empty an encoding's cache of merged pieces; the number of entries it held.  For
    build_scripts/bench/bench_browser.py, which times every call without that cache (as bench.py
    does); not part of the shim's API."""
    cache = getattr(_tok(key), "_piece_cache", None)
    if cache is None:
        return 0
    n = len(cache)
    cache.clear()
    return n


def count_batch(key: str, texts, allowed, disallowed, add_special=None) -> array:
    tok = _tok(key)
    kwargs = _kwargs(tok, allowed, disallowed, add_special)
    return array("i", [tok.count(text, **kwargs) for text in _py(texts)])


def _native_offsets(tok, text: str, kwargs: dict) -> tuple[list[int], list[tuple[int, int]]]:
    """The ids of `tok.encode(text, **kwargs)` and each token's (start, end) code-point span in
    `text`: the tokenizer's own `encode_with_offsets` (every kind has it; a GGUF's are made
    by anytok.gguf.offsets, llama.cpp reporting none)."""
    ids, offsets = tok.encode_with_offsets(text, **kwargs)
    return list(ids), offsets


_first, _second = itemgetter(0), itemgetter(1)


def _same_index(i: int) -> int:
    return i


def _utf16_index(text: str):
    """A function from code-point index in `text` to UTF-16 index (identity when there is no
    character beyond the BMP)."""
    if len(text.encode("utf-16-le", "surrogatepass")) == 2 * len(text):
        return _same_index
    table = [0]
    for c in text:
        table.append(table[-1] + (2 if c > "\uffff" else 1))
    return table.__getitem__


def encode_offsets(key: str, text: str, allowed, disallowed, add_special=None) -> array:
    """ids and UTF-16 offsets, flat: id0, start0, end0, id1, ... (JavaScript string indexes)."""
    tok = _tok(key)
    ids, offsets = _native_offsets(tok, text, _kwargs(tok, allowed, disallowed, add_special))
    u16 = _utf16_index(text)
    out = array("i", bytes(12 * len(ids)))
    out[0::3] = array("i", ids)
    # (maps, no Python call per token: the offsets of a long text are most of this call's work)
    starts, ends = map(_first, offsets), map(_second, offsets)
    if u16 is not _same_index:
        starts, ends = map(u16, starts), map(u16, ends)
    out[1::3] = array("i", starts)
    out[2::3] = array("i", ends)
    return out


def tokenize(key: str, text: str, allowed, disallowed, add_special=None) -> array:
    """For the page's token view: id, start, end (UTF-16 offsets, `encode_offsets`' exact
    ones), byte length, for each token, flat.  The byte length is that of the token's own text
    (-1 where unknown): for a token holding part of a character, the bytes it holds."""
    tok = _tok(key)
    ids, offsets = _native_offsets(tok, text, _kwargs(tok, allowed, disallowed, add_special))
    if isinstance(tok, anytok.Encoding):
        sizes = list(map(len, tok.decode_tokens_bytes(ids)))
    else:
        sizes = [-1 if (b := _surface(key, tok, i)) is None else len(b) for i in ids]
    u16 = _utf16_index(text)
    out = array("i", bytes(16 * len(ids)))
    out[0::4] = array("i", ids)
    out[1::4] = array("i", [u16(a) for a, _ in offsets])
    out[2::4] = array("i", [u16(b) for _, b in offsets])
    out[3::4] = array("i", sizes)
    return out


def decode(key: str, ids, errors: str) -> str:
    tok = _tok(key)
    if isinstance(tok, anytok.Encoding):
        return tok.decode(_ints(ids), errors=errors)
    if errors not in (None, "replace"):
        raise ValueError(
            f"errors={errors!r} applies to tiktoken-style encodings; {tok.name} is {_KIND_NAMES[_kind(tok)]}, "
            "which decodes as its own library does (invalid UTF-8 becomes U+FFFD)"
        )
    return tok.decode(_ints(ids))


def decode_utf8(key: str, ids):
    """The bytes of `ids` for a tiktoken-style encoding, which the worker decodes itself (as
    `decode` with errors="replace" would); None for other kinds of tokenizer."""
    tok = _tok(key)
    if not isinstance(tok, anytok.Encoding):
        return None
    return memoryview(tok.decode_bytes(_ints(ids)))


def decode_table(key: str):
    """Every token's bytes, for the page to decode a tiktoken-style encoding on its own (as
    `decode_utf8` plus the worker's TextDecoder would); None for other kinds of tokenizer.

    A dict: "bytes", the bytes of tokens 0..n_vocab-1 one after the other; "lengths", n_vocab
    unsigned ints, the bytes of each (0 for an id that is no token, for which decode raises
    KeyError); "empty", the ids of tokens of no bytes (none in any known vocabulary), which are
    not holes.  Built with as few calls per token as possible: under Pyodide each costs."""
    tok = _tok(key)
    if not isinstance(tok, anytok.Encoding):
        return None
    table = getattr(tok, "_decoder", None)  # decode_bytes's own table: id -> bytes, None for a hole
    if not isinstance(table, list) or len(table) != tok.n_vocab:
        # Without that table (another anytok): the same, one token at a time.
        table = []
        for i in range(tok.n_vocab):
            try:
                table.append(tok.decode_single_token_bytes(i))
            except KeyError:
                table.append(None)
    from anytok.core import _positions_of_none

    empty = [i for i, b in enumerate(table) if b == b""] if b"" in table else []
    holes = _positions_of_none(table)
    if holes:
        table = list(table)
        for i in holes:
            table[i] = b""
    return {
        "bytes": memoryview(b"".join(table)),
        "lengths": array("I", [len(b) for b in table]),
        "empty": array("i", empty),
    }


def _token_name(tok, i: int) -> str:
    """The text that names token `i` in its vocabulary (a special token's name)."""
    kind = _kind(tok)
    if kind == "encoding":
        return tok.decode_single_token_bytes(i).decode("utf-8", "replace")
    if kind == "sentencepiece":
        return tok.pieces[i]
    if kind == "gguf":
        return tok.vocab.tokens[i]
    name = tok.id_to_token(i)
    if name is None:
        raise KeyError(i)
    return name


def token_bytes(key: str, ids):
    """Each token's own bytes, as the constraint engine matches them (the tokenizer's
    `token_env()`: a byte token is that byte, a byte-level token the bytes its characters stand
    for, a SentencePiece piece its text with U+2581 as a space), for the page to show a token
    holding part of a character as those bytes (<0xE5>) whatever the family.  A tokenizer the
    engine cannot read (a WordPiece tokenizer.json) gives the bytes its token view uses.

    A dict: "bytes", the bytes of the ordinary tokens among `ids` one after the other;
    "lengths", per id the number of those bytes, or -1 for a special token (end of sequence,
    control tokens: no text of their own), whose name is then in "names" (in order)."""
    tok = _tok(key)
    if key not in _engine_bytes:
        from anytok.constrain.errors import UnsupportedFeatureError

        try:
            _engine_bytes[key] = tok.token_env().token_bytes
        except UnsupportedFeatureError:
            _engine_bytes[key] = None
    table = _engine_bytes[key]
    ids = _ints(ids)
    n = tok.n_vocab
    parts, lengths, names = [], [], []
    for i in ids:
        if not 0 <= i < n:
            raise ValueError(f"token id {i} is out of range for {tok.name} ({n} tokens)")
        if table is not None:
            data = table.get(i)
        else:  # (_surface: b"" for a control token; an added special token's text)
            data = None if getattr(tok, "is_special_token", lambda _: False)(i) else _surface(key, tok, i) or None
        if data is None:
            try:
                names.append(_token_name(tok, i))
            except KeyError:
                raise ValueError(f"token id {i} is no token of {tok.name}") from None
            lengths.append(-1)
        else:
            parts.append(data)
            lengths.append(len(data))
    return {"bytes": memoryview(b"".join(parts)), "lengths": array("i", lengths), "names": names}


# --- token masks (anytok.constrain) --------------------------------------------------------

_constraints: dict = {}  # (kind, spec) -> Constraint, so that masks cached per state are reused
_matchers: dict = {}     # matcher id -> Matcher
_matcher_ids = iter(range(1, 1 << 62))


def constrain_new(key: str, kind: str, spec: str, eos) -> int:
    """A matcher of `kind` ("regex", "jsonSchema", "grammar", "gbnf"; `spec` the pattern, the
    schema's JSON text, the Lark text or the GBNF text) over tokenizer `key`; returns its id."""
    from anytok import constrain

    build = {"regex": constrain.regex, "jsonSchema": constrain.json_schema, "grammar": constrain.grammar,
             "gbnf": constrain.gbnf}[kind]
    c = _constraints.get((kind, spec))
    if c is None:
        c = build(spec)
        if len(_constraints) >= 64:
            _constraints.pop(next(iter(_constraints)))
        _constraints[kind, spec] = c
    m = c.matcher(_tok(key), eos_token=eos)
    mid = next(_matcher_ids)
    _matchers[mid] = m
    return mid


def constrain_trie_file(key: str, folder: str):
    """Trie files go to `folder` (the worker keeps its files in Cache Storage); returns the
    name of tokenizer `key`'s file there, which its first matcher reads if present (None when
    it reads none: a small vocabulary, or its trie made already)."""
    from anytok.constrain.tokens import TokenTrie

    os.makedirs(folder, exist_ok=True)
    os.environ["ANYTOK_CACHE_DIR"] = folder
    return TokenTrie.file_name(_tok(key))


def constrain_trie(key: str):
    """Tokenizer `key`'s token trie: [its file's path or None, "file" if it was read from
    that file or "built"], or None while no matcher made it."""
    from anytok.constrain.tokens import TokenTrie

    trie = TokenTrie.made(_tok(key))
    if trie is None:
        return None
    return [trie.cache_file[0] if trie.cache_file else None, "file" if trie.stored is not None else "built"]


def constrain_call(mid: int, op: str, arg):
    """One call on matcher `mid`: mask (its bytes), allowed, consume, accepting, stopped,
    forced, rollback, reset, free."""
    try:
        m = _matchers[mid]
    except KeyError:
        raise ValueError(f"matcher {mid} was freed or never made in this worker") from None
    if op == "mask":
        return memoryview(m.mask())
    if op == "allowed":
        return array("i", m.allowed())
    if op == "consume":
        return m.consume(int(arg))
    if op == "accepting":
        return m.is_accepting()
    if op == "stopped":
        return m.is_stopped()
    if op == "forced":
        return array("i", m.forced())
    if op == "rollback":
        m.rollback(int(arg))
        return m.num_tokens
    if op == "reset":
        m.reset()
        return 0
    if op == "free":
        del _matchers[mid]
        return None
    raise ValueError(f"unknown matcher operation {op!r}")


def uncompressed(data):
    """An .atok file with its payload stored uncompressed and a text index added
    (anytok.format.uncompressed(..., index=True)): how the worker keeps a bundled vocabulary in
    Cache Storage, so that a later visit's load skips the text table until a longer text
    comes.  Raises on anything else."""
    return memoryview(vocab_format.uncompressed(_bytes(data), index=True))


def to_atok(key: str):
    """The tokenizer as an anytok .atok file (anytok.files.tokenizer_to_bytes), for download."""
    return memoryview(tokenizer_to_bytes(_tok(key)))


_CHAT_MODELS = {"o200k_base": "gpt-4o", "cl100k_base": "gpt-4", "o200k_harmony": "gpt-oss-120b"}
_CHAT_VOCAB_SIZES = {"o200k_base": 200019, "cl100k_base": 100277, "o200k_harmony": 201088}


def chat(key: str, op: str, payload: str) -> str:
    """anytok.chat on the loaded encoding `key` (JSON in and out): op "encode" / "count" /
    "messageCounts" (messages), "countRequest" (a Chat Completions request), "harmonyRender"."""
    from anytok import chat as chat_mod
    from anytok.model import encoding_name_for_model

    from anytok import registry

    tok = _tok(key)
    args = json.loads(payload)
    name = getattr(tok, "name", None)
    # The page's bundled encoding is the one anytok.chat asks the registry for (the slim wheel has
    # no vocabulary files): registered under its name when it is that encoding.
    if isinstance(tok, anytok.Encoding) and _CHAT_VOCAB_SIZES.get(name) == tok.n_vocab:
        registry.ENCODINGS.setdefault(name, tok)
    model = args.get("model") or _CHAT_MODELS.get(name)
    if model is None:
        raise ValueError(f"anytok: chat needs an OpenAI model (options.model) for the tokenizer {name!r}")
    try:
        model_encoding = encoding_name_for_model(model)
    except KeyError:
        raise ValueError(f"unknown chat model {model!r}") from None
    if model_encoding != name:
        raise ValueError(f"model {model!r} uses {model_encoding}, not this tokenizer ({name})")
    prime = args.get("prime", "assistant")
    messages = args.get("messages")
    if op == "encode":
        if model_encoding == "o200k_harmony":
            result = chat_mod.harmony_render(messages, args.get("forCompletion", True))
        else:
            result = chat_mod.encode(messages, model, prime=prime)
    elif op == "count":
        result = chat_mod.count(messages, model, prime=prime)
    elif op == "messageCounts":
        result = chat_mod.message_counts(messages, model, prime=prime)
    elif op in ("countRequest", "requestReport"):
        # images of unknown size: `imageSizes` {url or file id: [width, height]}
        kwargs = {"image_sizes": args.get("imageSizes"), "auto_detail": args.get("autoDetail", "high")}
        request = args.get("request")
        result = chat_mod.count_request(request, model, **kwargs) if op == "countRequest" \
            else chat_mod.request_report(request, model, **kwargs)
    else:
        raise ValueError(f"unknown chat operation {op!r}")
    return json.dumps(result)


def _attach_config(tok, config: str, what: str) -> None:
    """Gives `tok` the chat templates of a tokenizer_config.json's text."""
    if not hasattr(tok, "apply_chat_template"):
        raise ValueError(f"tokenizer_config.json: chat templates apply to Hugging Face tokenizer.json "
                         f"tokenizers, not to {what} ({_KIND_NAMES[_kind(tok)]})")
    from anytok.chat.template import ChatTemplates

    try:
        cfg = json.loads(config)
    except ValueError as e:
        raise ValueError(f"tokenizer_config.json: not valid JSON ({e})") from None
    if not isinstance(cfg, dict):
        raise ValueError("tokenizer_config.json: not a tokenizer_config.json (a JSON object)")
    tok.chat_templates = ChatTemplates(cfg)


def _has_template(tok) -> bool:
    templates = getattr(tok, "chat_templates", None)
    return templates is not None and templates.template is not None


def chat_template(key: str, op: str, payload: str) -> str:
    """tok.apply_chat_template (op "apply") or chat.message_counts ("messageCounts"), JSON in
    and out: anytok.js's applyChatTemplate."""
    from anytok import chat as chat_mod

    tok = _tok(key)
    if not hasattr(tok, "apply_chat_template"):
        raise ValueError(f"applyChatTemplate needs a Hugging Face tokenizer loaded with its "
                         f"tokenizer_config.json; {tok.name} is {_KIND_NAMES[_kind(tok)]}")
    args = json.loads(payload)
    kwargs = dict(args.get("kwargs") or {})
    if args.get("chatTemplate") is not None:
        kwargs["chat_template"] = args["chatTemplate"]
    for field in ("tools", "documents"):
        if args.get(field) is not None:
            kwargs[field] = args[field]
    if op == "messageCounts":
        return json.dumps(chat_mod.message_counts(
            args.get("messages"), tok, add_generation_prompt=bool(args.get("addGenerationPrompt", True)), **kwargs))
    if op != "apply":
        raise ValueError(f"unknown chat template operation {op!r}")
    result = tok.apply_chat_template(
        args.get("messages"), add_generation_prompt=bool(args.get("addGenerationPrompt", False)),
        continue_final_message=args.get("continueFinalMessage", False),
        tokenize=bool(args.get("tokenize", True)), **kwargs)
    return json.dumps(result, ensure_ascii=False)


def count_till_limit(key: str, text: str, limit: int):
    return _tok(key).count_till_limit(text, limit)


def chunks(key: str, text: str, max_tokens: int, overlap: int) -> list[str]:
    return _tok(key).chunks(text, max_tokens, overlap=overlap)


def split_by_tokens(key: str, text: str, max_tokens: int) -> list[str]:
    return list(_tok(key).split_by_tokens(text, max_tokens))


# --- each token's own bytes, for the page's token view (tokenize's byte lengths) --------------
#
# Such tokenizers normalize the text first (lowercase, strip accents, NFKC, spaces to "▁", a
# dummy "▁" in front, ...), so a token's text is found from the token alone (`_surface`).

_SP_NORMAL, _SP_UNKNOWN, _SP_CONTROL, _SP_USER, _SP_UNUSED, _SP_BYTE = 1, 2, 3, 4, 5, 6


def _gpt2_byte_table() -> dict[str, int]:
    """GPT-2's byte-level alphabet, character -> byte: printable Latin-1 bytes stand for
    themselves, the other 68 bytes for U+0100 onwards in byte order."""
    kept = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in kept}
    extra = 0
    for b in range(256):
        if b not in table.values():
            table[chr(0x100 + extra)] = b
            extra += 1
    return table


_BYTE_LEVEL = _gpt2_byte_table()


def _decoder_types(decoder) -> set[str]:
    if decoder is None:
        return set()
    cfg = decoder.to_config()
    out, todo = set(), [cfg]
    while todo:
        c = todo.pop()
        out.add(c.get("type"))
        todo += c.get("decoders") or []
    return out


def _byte_piece(token: str) -> int | None:
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
        try:
            return int(token[3:5], 16)
        except ValueError:
            return None
    return None


def _surface(key: str, tok, i: int) -> bytes | None:
    """The bytes token `i` spells in (normalized) text, or None when unknown."""
    cache = _surfaces.setdefault(key, {})
    if i in cache:
        return cache[i]
    kind = _kind(tok)
    if kind == "gguf":
        out = _gguf_surface(tok, i)
    elif kind == "sentencepiece":
        t = tok.types[i] if 0 <= i < tok.n_vocab else _SP_UNKNOWN
        if t == _SP_BYTE:
            out = bytes([_byte_piece(tok.pieces[i])])
        elif t == _SP_CONTROL:
            out = b""
        elif t == _SP_UNKNOWN:
            out = None
        else:
            out = tok.pieces[i].replace("\u2581", " ").encode("utf-8", "surrogatepass")
    else:
        out = _hf_surface(key, tok, i)
    cache[i] = out
    return out


def _gguf_surface(tok, i: int) -> bytes | None:
    """A GGUF token's text as llama.cpp detokenizes it; none for control tokens (a BOS added in
    front), unknown for unknown ones."""
    from anytok.gguf import vocab as V

    if not 0 <= i < tok.n_vocab:
        return None
    a = tok.vocab.attrs[i]
    if a & V.UNKNOWN:
        return None
    if a & V.CONTROL:
        return b""
    return tok._piece_table()[i]


def _hf_surface(key: str, tok, i: int) -> bytes | None:
    token = tok.id_to_token(i)
    if token is None:
        return None
    if i in getattr(getattr(tok, "added", None), "id_to_content", {}):  # an added token: its text
        return token.encode("utf-8", "surrogatepass")
    cache = _surfaces.setdefault(key, {})
    if "decoders" not in cache:
        cache["decoders"] = _decoder_types(tok.decoder)
        cache["byte_fallback"] = bool(getattr(tok.model, "byte_fallback", False))
        ref = None
        for text in ("a", "\u2581a", "\u0120a"):
            j = tok.token_to_id(text)
            if j is not None and tok.decode([j]).strip():
                ref = j
                break
        cache["ref"] = ref
    if cache["byte_fallback"] and (b := _byte_piece(token)) is not None:
        return bytes([b])
    if "ByteLevel" in cache["decoders"] and all(c in _BYTE_LEVEL for c in token):
        return bytes(_BYTE_LEVEL[c] for c in token)
    # The decoder's text for this token after another one, so that what decoders do at the
    # start (strip a space, keep a "##") does not apply.
    ref = cache["ref"]
    if ref is not None:
        before, both = tok.decode([ref]), tok.decode([ref, i])
        if both.startswith(before):
            return both[len(before):].encode("utf-8", "surrogatepass")
    return tok.decode([i]).encode("utf-8", "surrogatepass")


# --- training (a `train` request; web/worker.js runs it in a worker of its own) ------------
#
# Cancelling is the page's business: it terminates the worker that trains (anytok.js starts a
# fresh one for the next training), so nothing here needs to look for a cancel message while
# Python runs.

_TRAIN_OPTIONS = {"vocabSize": "vocab_size", "style": "style", "pattern": "pattern", "specialTokens": "special_tokens",
                  "minFrequency": "min_frequency", "maxTokenLength": "max_token_length", "name": "name"}


def _progress_message(info: dict) -> str:
    """anytok.train's progress dict as the JSON the page gets (camelCase keys)."""
    if info.get("phase") == "count":
        out = {"phase": "count", "mb": info["mb"], "mbPerS": info["mb_per_s"], "texts": info["texts"],
               "distinct": info["distinct"], "finished": bool(info.get("done"))}
    else:
        out = {"phase": "merge", "done": info["done"], "total": info["total"], "etaS": info.get("eta_s"),
               "finished": bool(info.get("finished"))}
    return json.dumps(out)


def train(texts, options, progress=None) -> dict:
    """Train a BPE vocabulary on `texts` (a JS array of strings) with `anytok.train`.

    `options`: vocabSize, style ("hf" | "tiktoken"), pattern (a regex; a bundled encoding's
    name only where that encoding's vocabulary is installed, which the slim wheel has not: the
    shim sends the regex), specialTokens, minFrequency, maxTokenLength, name.  `progress(json)`
    gets `_progress_message`'s JSON now and then.  Returns the files: "atok" (bytes), and
    "tokenizerJson" (style hf) or "tiktoken" (style tiktoken) text, with "merges" as
    array('i') of (left, right, new id) triples and the trained vocabulary's size."""
    import time

    texts = _py(texts)
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be an array of strings")
    given = json.loads(options) if isinstance(options, str) else (_py(options) or {})
    unknown = sorted(set(given) - set(_TRAIN_OPTIONS))
    if unknown:
        raise TypeError(f"unknown training option(s): {', '.join(unknown)} (known: {', '.join(_TRAIN_OPTIONS)})")
    kwargs = {_TRAIN_OPTIONS[k]: v for k, v in given.items() if v is not None}
    if "special_tokens" in kwargs:
        kwargs["special_tokens"] = list(kwargs["special_tokens"])
    report = (lambda info: progress(_progress_message(info))) if progress is not None else None
    start = time.perf_counter()
    trained = anytok.train(texts=texts, progress=report, **kwargs)
    seconds = time.perf_counter() - start
    hf = trained.style == "hf"
    tok = trained.to_tokenizer() if hf else trained.to_encoding()
    out = {
        "style": trained.style,
        "name": trained.name,
        "nVocab": trained.n_vocab,
        "nMerges": len(trained.merges),
        "pattern": trained.pattern,
        "specialTokens": trained.special_tokens,
        "trainSeconds": seconds,
        "atok": memoryview(tokenizer_to_bytes(tok, source=f"anytok.train style={trained.style}")),
        "merges": array("i", [x for m in trained.merges for x in m]),
    }
    if hf:
        out["tokenizerJson"] = trained.tokenizer_json_text()
    else:
        out["tiktoken"] = trained.tiktoken_text()
    return out


# --- training the other kinds (a `trainKind` request, in the training worker too) -----------
#
# SentencePiece models (anytok.train(style="sentencepiece"): the `.model` file sentencepiece's
# trainer writes) and tokenizers' WordPiece, WordLevel and Unigram trainers (anytok.hf: the tokenizer.json
# `tokenizers` saves),
# each with the pipeline docs/training-tokenizers.md spells out in Python.  Progress: reading the
# texts, then training (no finer steps: the trainers report none).

# SentencePieceTrainer's options the page may give, camelCase -> sentencepiece's name.
_SP_OPTIONS = {
    "".join(w if i == 0 else w.title() for i, w in enumerate(name.split("_"))): name
    for name in """vocab_size character_coverage byte_fallback split_digits split_by_whitespace
    split_by_unicode_script split_by_number max_sentencepiece_length user_defined_symbols control_symbols
    normalization_rule_name precompiled_charsmap add_dummy_prefix remove_extra_whitespaces input_sentence_size
    shuffle_input_sentence seed_sentencepiece_size shrinking_factor num_sub_iterations num_threads unk_id bos_id
    eos_id pad_id unk_piece bos_piece eos_piece pad_piece unk_surface hard_vocab_limit use_all_vocab
    treat_whitespace_as_suffix allow_whitespace_only_pieces max_sentence_length""".split()
}
# tokenizers' kinds: the options each takes (camelCase) besides kind, style and name.
_HF_OPTIONS = {
    "wordpiece": {"vocabSize", "minFrequency", "specialTokens", "unkToken", "lowercase", "stripAccents",
                  "limitAlphabet", "continuingSubwordPrefix"},
    "wordlevel": {"vocabSize", "minFrequency", "specialTokens", "unkToken", "lowercase"},
    "unigram": {"vocabSize", "specialTokens", "unkToken", "shrinkingFactor", "maxPieceLength", "nSubIterations"},
}


class _ReadReports:
    """The texts, counted as they are read, for the page's progress bar."""

    def __init__(self, texts: list, progress):
        self.texts, self.progress = texts, progress
        self.total = sum(len(t) for t in texts)

    def __iter__(self):
        import time

        chars = 0
        report = self.progress
        if report is not None:
            report({"phase": "read", "sentences": 0, "chars": 0, "total": self.total, "finished": False})
        next_report = time.perf_counter() + 0.2
        for n, text in enumerate(self.texts, 1):
            chars += len(text)
            if report is not None and n & 255 == 0 and time.perf_counter() >= next_report:
                next_report = time.perf_counter() + 0.2
                report({"phase": "read", "sentences": n, "chars": chars, "total": self.total, "finished": False})
            yield text
        if report is not None:
            report({"phase": "read", "sentences": len(self.texts), "chars": chars, "total": self.total,
                    "finished": True})


def _train_hf(kind: str, texts, given: dict, progress) -> str:
    """tokenizers' trainer of `kind` on `texts` with a BERT-like (WordPiece), a Whitespace
    (WordLevel) or a Metaspace (Unigram) pipeline; the tokenizer.json text."""
    from anytok.hf import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    unknown = sorted(set(given) - _HF_OPTIONS[kind])
    if unknown:
        raise TypeError(f"unknown option(s) for kind {kind!r}: {', '.join(unknown)} "
                        f"(known: {', '.join(sorted(_HF_OPTIONS[kind]))})")
    vocab_size = given.get("vocabSize", 30000 if kind != "unigram" else 8000)
    if kind == "unigram":
        specials = list(given.get("specialTokens", ["<unk>"]))
        unk = given.get("unkToken", "<unk>")
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        kwargs = {k: given[c] for c, k in (("shrinkingFactor", "shrinking_factor"), ("maxPieceLength", "max_piece_length"),
                                           ("nSubIterations", "n_sub_iterations")) if c in given}
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=specials, unk_token=unk,
                                          show_progress=False, **kwargs)
    elif kind == "wordlevel":
        specials = list(given.get("specialTokens", ["[UNK]"]))
        tok = Tokenizer(models.WordLevel(unk_token=given.get("unkToken", "[UNK]")))
        if given.get("lowercase", True):
            tok.normalizer = normalizers.Lowercase()
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.WordLevelTrainer(vocab_size=vocab_size, min_frequency=given.get("minFrequency", 0),
                                            special_tokens=specials, show_progress=False)
    else:
        specials = list(given.get("specialTokens", ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
        unk = given.get("unkToken", "[UNK]")
        prefix = given.get("continuingSubwordPrefix", "##")
        tok = Tokenizer(models.WordPiece(unk_token=unk, continuing_subword_prefix=prefix))
        tok.normalizer = normalizers.BertNormalizer(lowercase=given.get("lowercase", True),
                                                    strip_accents=given.get("stripAccents"))
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece(prefix=prefix)
        kwargs = {"min_frequency": given.get("minFrequency", 0), "special_tokens": specials, "show_progress": False,
                  "continuing_subword_prefix": prefix}
        if "limitAlphabet" in given:
            kwargs["limit_alphabet"] = given["limitAlphabet"]
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, **kwargs)
    texts = _ReadReports(texts, progress)
    if progress is not None:
        progress_then = progress

        def reading():
            yield from texts
            progress_then({"phase": "train", "step": "pieces", "finished": False})

        tok.train_from_iterator(reading(), trainer)
    else:
        tok.train_from_iterator(texts, trainer)
    if kind == "wordpiece" and tok.token_to_id("[CLS]") is not None and tok.token_to_id("[SEP]") is not None:
        # BERT's post-processor, as its tokenizer.json has it.
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    return tok.to_str()


def train_kind(texts, options, progress=None) -> dict:
    """Train a tokenizer of another kind than byte-level BPE on `texts` (a JS array of strings,
    each one sentence or sequence, as sentencepiece's `sentence_iterator` and tokenizers'
    `train_from_iterator` take them).

    `options` (JSON): kind ("unigram" | "bpe" | "char" | "word" | "wordpiece" | "wordlevel"),
    style ("sentencepiece" | "hf"), name, and the kind's options (camelCase): SentencePiece's
    trainer options (vocabSize, characterCoverage, byteFallback, splitDigits, ...;
    precompiledCharsmap as bytes), or tokenizers' (vocabSize, minFrequency, specialTokens,
    unkToken, lowercase, ...).  `progress(json)`: {"phase": "read", "sentences", "chars",
    "total", "finished"}, then {"phase": "train", "step", "finished"}.  Returns "model" (the
    .model file's bytes) or "tokenizerJson" (text), with kind, style and trainSeconds."""
    import time

    texts = _py(texts)
    if isinstance(texts, str) or not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be an array of strings")
    given = json.loads(options) if isinstance(options, str) else (_py(options) or {})
    kind = given.pop("kind", None)
    style = given.pop("style", None)
    given.pop("name", None)
    given = {k: v for k, v in given.items() if v is not None}
    report = (lambda info: progress(json.dumps(info))) if progress is not None else None
    start = time.perf_counter()
    out = {"kind": kind, "style": style}
    if style == "sentencepiece":
        if kind not in ("unigram", "bpe", "char", "word"):
            raise ValueError(f"style 'sentencepiece' trains kind 'unigram', 'bpe', 'char' or 'word', not {kind!r}")
        unknown = sorted(set(given) - set(_SP_OPTIONS))
        if unknown:
            raise TypeError(f"unknown SentencePiece option(s): {', '.join(unknown)} (known: {', '.join(_SP_OPTIONS)})")
        kwargs = {_SP_OPTIONS[k]: v for k, v in given.items()}
        if "precompiled_charsmap" in kwargs:
            kwargs["precompiled_charsmap"] = _bytes(kwargs["precompiled_charsmap"])
        for key in ("user_defined_symbols", "control_symbols"):
            if key in kwargs and not isinstance(kwargs[key], str):
                kwargs[key] = list(kwargs[key])
        if "vocab_size" not in kwargs:
            raise TypeError("vocabSize is required")
        if report is not None:
            # The total, for the page's bar: sentencepiece's reports count what was read.
            total = sum(len(t) for t in texts)
            report_sp = lambda info: report({**info, "total": total} if info["phase"] == "read" else info)
        else:
            report_sp = None
        model = anytok.train(texts=texts, style="sentencepiece", kind=kind, progress=report_sp, **kwargs)
        out["model"] = memoryview(model.data)
    elif style == "hf" and kind in _HF_OPTIONS:
        out["tokenizerJson"] = _train_hf(kind, texts, given, report)
        if report is not None:
            report({"phase": "train", "step": "write", "finished": True})
    else:
        raise ValueError(f"no trainer for kind {kind!r} and style {style!r}")
    out["trainSeconds"] = time.perf_counter() - start
    return out
