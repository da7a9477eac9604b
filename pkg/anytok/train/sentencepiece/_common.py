"""What every SentencePiece trainer shares (`trainer_interface.cc`): meta pieces, loading and
normalizing sentences, the required characters, splitting into words, and which strings may
be pieces."""

from __future__ import annotations

import bisect
from collections import Counter
from typing import Iterable, Iterator

from ...sentencepiece.model_proto import BYTE, CHAR, CONTROL, UNKNOWN, USER_DEFINED, WORD
from ...sentencepiece.normalizer import Normalizer
from . import _scripts
from ._spec import TrainerOptions, f32

WS = "\u2581"  # the escaped space
UNK_CHAR = "\u2585"  # stands for characters left out of the alphabet
BOUNDARY = "\t"  # where a meta piece was cut out of a sentence (0.2.1; 0.2.3: BOUNDARY_023)
BOUNDARY_023 = "\x1f"

_HAN = _scripts.NAMES.index("Han")
_HIRAGANA = _scripts.NAMES.index("Hiragana")
_KATAKANA = _scripts.NAMES.index("Katakana")
_INHERITED = _scripts.NAMES.index("Inherited")
_ANY = -1
_STARTS = _scripts.STARTS
_IDS = _scripts.IDS


def script_of(c: str) -> int:
    return _IDS[bisect.bisect_right(_STARTS, ord(c)) - 1]


def _is_decimal(c: str) -> bool:
    return "0" <= c <= "9" or "\uff10" <= c <= "\uff19"


class TrainerError(ValueError):
    """sentencepiece's trainer would refuse these options or this input."""


def meta_pieces(opt: TrainerOptions, v023: bool = False) -> dict[int, tuple[str, int]]:
    """id -> (piece, type) of the special pieces (`InitMetaPieces`; `v023`: as sentencepiece
    0.2.3's, which gives a WORD model each user-defined symbol also with "▁" before it)."""
    meta: dict[int, tuple[str, int]] = {}
    has_unk = False
    for id_, piece in ((opt.unk_id, opt.unk_piece), (opt.bos_id, opt.bos_piece),
                       (opt.eos_id, opt.eos_piece), (opt.pad_id, opt.pad_piece)):
        if id_ < 0:
            continue
        if id_ >= opt.vocab_size or id_ in meta or (has_unk and piece == opt.unk_piece):
            raise TrainerError(f"special piece {piece!r}: id {id_} is taken or out of range")
        if piece == opt.unk_piece:
            has_unk = True
        meta[id_] = (piece, UNKNOWN if piece == opt.unk_piece else CONTROL)
    if not has_unk:
        raise TrainerError(f"{opt.unk_piece} must be defined")
    seen: set[str] = set()
    next_id = 0

    def add(w: str, ptype: int) -> None:
        nonlocal next_id
        if w in seen:
            raise TrainerError(f"{w} is already defined. duplicated symbols are not allowed.")
        seen.add(w)
        if w == opt.unk_piece:
            raise TrainerError(f"{w} must not be defined with control_symbols and user_defined_symbols")
        if w == opt.bos_piece and opt.bos_id >= 0:
            meta[opt.bos_id] = (meta[opt.bos_id][0], ptype)
        elif w == opt.eos_piece and opt.eos_id >= 0:
            meta[opt.eos_id] = (meta[opt.eos_id][0], ptype)
        elif w == opt.pad_piece and opt.pad_id >= 0:
            meta[opt.pad_id] = (meta[opt.pad_id][0], ptype)
        else:
            while next_id in meta:
                next_id += 1
            meta[next_id] = (w, ptype)

    for w in opt.control_symbols:
        add(w, CONTROL)
    for w in opt.user_defined_symbols:
        add(w, USER_DEFINED)
        if v023 and opt.model_type == WORD and not w.startswith(WS):
            add(WS + w, USER_DEFINED)
    if opt.byte_fallback:
        for i in range(256):
            add(f"<0x{i:02X}>", BYTE)
    return meta


def read_lines(files: Iterable[str]) -> Iterable[str]:
    """Lines as `std::getline` gives them: split at "\\n" only, no final empty line."""
    for path in files:
        with open(path, "rb") as f:  # read as it goes: a binary file's lines end at b"\n"
            for line in f:
                if line[-1:] == b"\n":
                    line = line[:-1]
                yield line.decode("utf-8", errors="strict")


def _global_replace(text: str, metas: list[str], boundary: str) -> str:
    # PrefixMatcher::GlobalReplace: at each position the longest meta piece that starts there
    # becomes one BOUNDARY; otherwise one character is kept.
    if not metas or not any(m in text for m in metas):
        return text
    out = []
    i = 0
    n = len(text)
    while i < n:
        for m in metas:  # longest first
            if text.startswith(m, i):
                out.append(boundary)
                i += len(m)
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def load_sentences(lines: Iterable[str], opt: TrainerOptions, normalizer: Normalizer,
                   meta: dict[int, tuple[str, int]], boundary: str = BOUNDARY,
                   v023: bool = False, merge: bool = False) -> list[list]:
    """`LoadSentences` up to the normalization: [sentence, count] pairs in input order
    (`v023`: as sentencepiece 0.2.3, which also drops an empty sentence swapped in).

    `merge`: for a trainer that only counts (the sentences' order and the empty ones do not
    matter to it): each distinct normalized sentence once, with the number of times it
    occurs, and no empty sentence; each distinct line is normalized once."""
    limit = opt.input_sentence_size
    if limit > 0 and opt.shuffle_input_sentence:
        raise NotImplementedError(
            "input_sentence_size with shuffle_input_sentence=true (sentencepiece samples with "
            "its own random generator); give shuffle_input_sentence=False")
    if merge:
        return _load_merged(lines, opt, normalizer, meta, boundary)
    sentences: list[list] = []
    max_len = opt.max_sentence_length
    for line in _usable(lines, max_len):
        sentences.append([line, 1])
        if limit > 0 and len(sentences) >= limit:
            break
    if not sentences:
        raise TrainerError("no sentences in the input")
    metas = sorted({p for p, _ in meta.values()}, key=lambda s: (-len(s.encode("utf-8")), s))
    for s in sentences:
        s[0] = _global_replace(normalizer.normalize(s[0]), metas, boundary)
    # Empty sentences go by swapping in the last one, which 0.2.1 does not look at again
    # (so an empty last sentence may stay), 0.2.3 does.
    i = 0
    while i < len(sentences):
        if " " in sentences[i][0]:
            raise TrainerError("normalized string must not include spaces")
        if not sentences[i][0]:
            sentences[i] = sentences[-1]
            sentences.pop()
            if v023:
                continue
        i += 1
    return sentences


def _usable(lines: Iterable[str], max_len: int) -> Iterator[str]:
    """The lines sentencepiece keeps: not empty, at most `max_len` UTF-8 bytes, without
    U+2585 (its stand-in for characters left out)."""
    for line in lines:
        if not line:
            continue
        # a line of more UTF-8 bytes than max_len has more than max_len // 4 characters
        if len(line) > max_len // 4 and len(line.encode("utf-8")) > max_len:
            continue
        if UNK_CHAR in line:
            continue
        yield line


def _load_merged(lines: Iterable[str], opt: TrainerOptions, normalizer: Normalizer,
                 meta: dict[int, tuple[str, int]], boundary: str) -> list[list]:
    """`load_sentences(..., merge=True)`: the same lines kept (and counted towards
    input_sentence_size) as there, counted by their text."""
    counts: dict[str, int] = {}
    get = counts.get
    limit = opt.input_sentence_size
    max_len = opt.max_sentence_length
    n = 0
    for line in _usable(lines, max_len):
        counts[line] = get(line, 0) + 1
        n += 1
        if limit > 0 and n >= limit:
            break
    if not n:
        raise TrainerError("no sentences in the input")
    metas = sorted({p for p, _ in meta.values()}, key=lambda s: (-len(s.encode("utf-8")), s))
    raw = list(counts.items())
    del counts
    merged: dict[str, int] = {}
    get = merged.get
    normalize = normalizer.normalize
    for i, (line, count) in enumerate(raw):
        raw[i] = None  # the line's memory goes as its normalized form comes
        s = _global_replace(normalize(line), metas, boundary)
        merged[s] = get(s, 0) + count
    merged.pop("", None)
    if any(" " in s for s in merged):
        raise TrainerError("normalized string must not include spaces")
    return [[s, count] for s, count in merged.items()]


def required_chars(sentences: list[list], opt: TrainerOptions,
                   meta: dict[int, tuple[str, int]], boundary: str = BOUNDARY) -> dict[str, int]:
    """The alphabet (`character_coverage` of the characters, most frequent first); rarer
    characters in `sentences` become UNK_CHAR, in place."""
    counts: dict[str, int] = {}
    required: set[str] = set()
    for c in opt.required_chars:
        if c != "\0":
            required.add(c)
            counts.setdefault(c, 0)
    found: Counter = Counter()
    for s, freq in sentences:
        if freq == 1:
            found.update(s)  # counted in C
        else:
            for c, n in Counter(s).items():
                found[c] += n * freq
    found.pop("\0", None)
    for c, n in found.items():
        counts[c] = counts.get(c, 0) + n
    total = sum(found.values())
    del found
    if total <= 0:
        raise TrainerError("no characters in the input")
    coverage_limit = opt.character_coverage
    # Sorted(): (is_required, count) descending, then the character.
    order = sorted(counts.items(), key=lambda kv: (not (kv[0] in required), -kv[1], kv[0]))
    chars: dict[str, int] = {}
    acc = 0
    for c, n in order:
        coverage = f32(acc / total)
        if not opt.use_all_vocab and coverage >= coverage_limit:
            break
        acc += n
        if c == boundary:
            continue
        chars[c] = n
    for s in sentences:
        text = s[0]
        if any(c not in chars for c in set(text)):
            s[0] = "".join(c if c in chars else UNK_CHAR for c in text)
    if opt.model_type not in (WORD, CHAR) and len(chars) + len(meta) > opt.vocab_size:
        raise TrainerError(
            f"Vocabulary size is smaller than required_chars. {opt.vocab_size} vs "
            f"{len(chars) + len(meta)}. Increase vocab_size or decrease character_coverage")
    return chars


def sorted_counts(counts: dict[str, int]) -> list[list]:
    """`Sorted()`: by count descending, then by the string (UTF-8 byte order = code points)."""
    return [[k, v] for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def split_into_words(text: str, suffix: bool, ws_only: bool) -> list[str]:
    """`SplitIntoWords` of model_interface.cc on an escaped sentence."""
    words: list[str] = []
    if suffix:
        if text:
            words.append("")
        in_ws = False
        n = len(text)
        for i, c in enumerate(text):
            is_ws = c == WS
            if is_ws:
                in_ws = True
            elif in_ws:
                if ws_only:
                    words.append("")
                in_ws = False
            words[-1] += c
            if i + 1 < n and is_ws and not ws_only:
                words.append("")
        return words
    in_ws = False
    for i, c in enumerate(text):
        is_ws = c == WS
        if i == 0 or (is_ws and (not in_ws or not ws_only)):
            words.append("")
            in_ws = True
        if in_ws and not is_ws:
            in_ws = False
        words[-1] += c
    return words


def _words_before_ws(text: str) -> list[str]:
    """`split_into_words(text, False, False)`: a word starts at the start and at each U+2581."""
    parts = text.split(WS)
    words = [WS + p for p in parts[1:]]
    if parts[0]:
        words.insert(0, parts[0])
    return words


def split_by_whitespace(sentences: list[list], opt: TrainerOptions) -> list[list]:
    counts: Counter = Counter()
    suffix = opt.treat_whitespace_as_suffix
    ws_only = opt.allow_whitespace_only_pieces
    for s, freq in sentences:
        words = _words_before_ws(s) if not suffix and not ws_only else split_into_words(s, suffix, ws_only)
        if freq == 1:
            counts.update(words)  # counted in C
        else:
            for w in words:
                counts[w] += freq
    return sorted_counts(counts)


class PieceChecker:
    """`IsValidSentencePiece`: which strings may become pieces."""

    def __init__(self, opt: TrainerOptions, boundary: str = BOUNDARY):
        self.boundary = boundary
        self.max_len = opt.max_sentencepiece_length
        self.ws_only = opt.allow_whitespace_only_pieces
        self.suffix = opt.treat_whitespace_as_suffix
        self.by_ws = opt.split_by_whitespace
        self.by_number = opt.split_by_number
        self.digits = opt.split_digits
        self.by_script = opt.split_by_unicode_script
        self._kinds: dict = {}
        # character -> its script, for the characters of one script that is not Inherited
        # and not decimal: a piece of those of one script (after a leading whitespace when
        # it is a prefix) passes every test below
        self._plain: dict = {}

    def __call__(self, piece: str) -> bool:
        n = len(piece)
        if n == 0 or n > self.max_len:
            return False
        body = piece[1:] if piece[0] == WS and not self.suffix else piece
        if body:
            if WS in body and self.by_ws and not self.suffix and not (self.ws_only and piece.count(WS) == n):
                return False  # a whitespace inside a prefix piece
            scripts = set(map(self._plain.get, body))
            if len(scripts) == 1 and None not in scripts:
                return True
        kinds = self._kinds
        try:
            ks = [kinds[c] for c in piece]
        except KeyError:
            for c in piece:
                if c not in kinds:
                    k = kinds[c] = _kind(c, self.boundary)
                    if k is not None and k is not _WS_KIND and not k[1] and k[0] != _INHERITED:
                        self._plain[c] = k[0]
            ks = [kinds[c] for c in piece]
        if None in ks:
            return False
        prev = _ANY
        all_ws = None
        for pos, k in enumerate(ks):
            if k is _WS_KIND:
                if all_ws is None:
                    all_ws = piece.count(WS) == n
                if not self.ws_only or not all_ws:
                    if self.suffix:
                        if (self.by_ws and pos < n - 1) or (not self.by_ws and pos < n - 1 and pos == 0):
                            return False
                    elif (self.by_ws and pos > 0) or (not self.by_ws and pos > 0 and pos == n - 1):
                        return False
            else:
                s, decimal = k
                if s == _INHERITED:
                    s = prev
                if decimal:
                    if self.digits and n > 1:
                        return False
                    if not self.by_number:
                        s = _ANY
                if self.by_script and s != _ANY and prev != _ANY and prev != s:
                    return False
                prev = s
        return True


_WS_KIND = (-2, False)


def _kind(c: str, boundary: str):
    """What PieceChecker needs of a character: None when no piece may hold it, _WS_KIND,
    or (script, is decimal) with kana counted as Han."""
    if c == UNK_CHAR or c == "\0" or c == boundary or c == " ":
        return None
    o = ord(c)
    if 0xD800 <= o <= 0xDFFF or o > 0x10FFFF:
        return None
    if c == WS:
        return _WS_KIND
    s = script_of(c)
    if s == _HIRAGANA or s == _KATAKANA or o == 0x30FC:
        s = _HAN
    return (s, _is_decimal(c))
