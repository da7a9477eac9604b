"""anytok.constrain.grammar / .gbnf (the Earley parser over lexemes) against llguidance 1.9.1 and lark.

* Lark-dialect cases (our own, of the kinds llguidance's parser/tests/test_lark.rs covers): for
  each grammar, strings fed byte by byte to both matchers must get the same verdict
  (complete / can continue / rejected), and the verdict written here is llguidance's.
* Grammars nobody on this project wrote: llama.cpp's 8 GBNF grammars (`constrain.gbnf` of the
  text, and `constrain.grammar` of llguidance's `gbnf_to_lark` of it) and outlines' Lark
  grammars: seeded random walks with the masks, forced tokens and accepting/stopped states
  equal to llguidance's at every step (`tests/test_constrain.py`'s `_walk`).
* Acceptance checked independently: every prefix of a walk that anytok calls complete must
  parse with lark's Earley parser (`lexer="dynamic"`); so must the hand-written samples, and
  strings lark rejects must be rejected.
* Rule attributes and options: `stop=` (and `stop=""`, the end of sequence as the stop),
  `max_tokens=` (with and without a stop or `lazy`), `no_forcing`: seeded walks compared
  with llguidance at every step; what llguidance refuses, anytok refuses with a
  `GrammarSyntaxError`.
* Limits: blow-up grammars fail with `GrammarLimitError` quickly; deep nesting works.

Default run: short walks on o200k_base (a few on cl100k_base and Mistral v1's SentencePiece
.model).  `ANYTOK_FULL=1` runs longer walks with more seeds on o200k_base, cl100k_base and
Llama 3's tokenizer.json, every GBNF grammar on cl100k_base and Mistral v1, and more random
grammars:
`ANYTOK_FULL=1 pytest tests/test_constrain_grammar.py`.
"""

from __future__ import annotations

import functools
import os
import random
import re
import time
from pathlib import Path

import pytest

import lark
from llguidance import LLMatcher
from llguidance.gbnf_to_lark import gbnf_to_lark

from anytok import constrain
from anytok.constrain import GrammarLimitError, Limits
from anytok.constrain.tokens import TokenTrie
from test_constrain import _check_same, _lltokenizer, _ref_mask, anytok_encoding
from test_constrain import _walk as walk

FULL = os.environ.get("ANYTOK_FULL") == "1"
CACHE = Path(__file__).resolve().parent.parent / ".cache" / "llama_cpp"
GBNF_NAMES = ["arithmetic", "c", "chess", "english", "japanese", "json", "json_arr", "list"]
OUTLINES_NAMES = ["arithmetic", "json"]


@functools.lru_cache(maxsize=None)
def _byte_tokens(name: str) -> dict:
    return {b[0]: t for t, b in TokenTrie.of(anytok_encoding(name)).token_bytes.items() if len(b) == 1}


def _verdicts(text_grammar: str, strings, ours) -> list:
    """[(string, anytok's verdict, llguidance's verdict)], fed byte by byte on cl100k_base."""
    out = []
    for s in strings:
        ref = LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_lark(text_grammar), log_level=0)
        assert not ref.is_error(), ref.get_error()
        m = ours.matcher(anytok_encoding("cl100k_base"))
        out.append((s, _feed_bytes(s, m.consume, m.is_accepting), _feed_bytes(s, ref.consume_token, ref.is_accepting)))
    return out


def _feed_bytes(s: str, consume, accepting) -> str:
    """`s` fed one single-byte cl100k_base token at a time: "yes" (complete), "prefix" (may
    continue) or "no" (a byte rejected)."""
    bt = _byte_tokens("cl100k_base")
    for b in s.encode():
        if not consume(bt[b]):
            return "no"
    return "yes" if accepting() else "prefix"


# (grammar, {string: llguidance's verdict}): "yes" complete, "prefix" may continue, "no" rejected
CASES = [
    # left recursion, several levels
    ('start: list\nlist: list "," item | item\nitem: /[0-9]+/\n',
     {"1,22,3": "yes", "1,": "prefix", "1,,2": "no", "": "prefix"}),
    ('start: e\ne: e "+" t | e "-" t | t\nt: t "*" f | f\nf: "(" e ")" | /[0-9]+/\n',
     {"1+2*(3-4)": "yes", "(1+": "prefix", "1+*2": "no", "((2))": "yes"}),
    # right recursion, empty alternatives, nullable rules
    ('start: "x" start "y" | "z"\n', {"xxzyy": "yes", "xxzy": "prefix", "xzyy": "no"}),
    ('start: a b c\na: "a"?\nb: | "b"\nc: "c"*\n', {"": "yes", "ac": "yes", "bcc": "yes", "cb": "no"}),
    # greedy lexing: /a+/ eats every "a" (the grammar's language would allow "aa")
    ("start: A B\nA: /a+/\nB: /a/\n", {"aa": "prefix", "a": "prefix", "ab": "no"}),
    ('start: A "b"\nA: /a[a-z]*/\n', {"ab": "prefix", "axb": "prefix", "a": "prefix"}),
    # two lexemes matching one string are both scanned
    ('start: (kw | id) (";" (kw | id))*\nkw: "if" | "else"\nid: /[a-z]+/\n',
     {"if;x;else": "yes", "iff": "yes", "if;": "prefix", "If": "no"}),
    ('start: x | y\nx: "true"\ny: /[a-z]+/\n', {"true": "yes", "tru": "yes", "truex": "yes"}),
    # lexemes matching the empty string
    ('start: A "b"\nA: /a*/\n', {"b": "yes", "aab": "yes", "": "prefix", "ba": "no"}),
    ('start: A B\nA: /x*/\nB: /y*/\n', {"": "yes", "xxy": "yes", "y": "yes", "yx": "no"}),
    # %ignore: between lexemes, not first, after the last only where another lexeme may follow
    ('start: "a" "b"?\n%ignore " "\n', {"a b": "yes", "a ": "yes", " a": "no", "a b ": "no"}),
    ('start: "(" ")"\n%ignore /[ \\t]+/\n%ignore /#[^\\n]*\\n/\n', {"( #c\n )": "yes", "(#c": "prefix"}),
    ('%llguidance {"allow_initial_skip": true}\nstart: "a" "b"\n%ignore " "\n', {" a b": "yes", "  ab": "yes"}),
    ('%llguidance {"some_future_option": 1}\n%llguidance {}\nstart: "a"\n', {"a": "yes", " a": "no"}),
    ('%llguidance {"ignore_once": true}\n%ignore /[ \\t]{1,2}/\nstart: "A" "!"\n',
     {"A  !": "yes", "A   !": "no", "A\t!": "yes"}),
    # lazy lexemes end as soon as they match
    ('start: foo "x"\nfoo[lazy]: /[0-9]+/\n', {"1x": "yes", "12x": "no"}),
    ('start: foo "!"\nfoo[lazy]: /.*<end>/\n', {"ab<end>!": "yes", "a<end>b<end>!": "no"}),
    ('start: "a" foo\nfoo[lazy, temperature=0.5, capture]: /[a-z]*?b/\n', {"axyb": "yes", "abb": "no"}),
    # ...except one completed by the byte that ended the lexeme before it (llguidance's lexer)
    ('start: A z "x"\nA: /a+/\nz[lazy]: /b+/\n', {"abx": "yes", "abbx": "yes", "abbbx": "no", "ab": "prefix"}),
    ('start: "a" z "x"\nz[lazy]: /b+/\n', {"abx": "yes", "abbx": "no"}),
    # suffix="...": a lazy lexeme of the body and then the suffix
    ('start: "<" foo ">" foo\nfoo[suffix="</x>"]: /[a-z<\\/>]*/\n',
     {"<a</x>>b</x>": "yes", "<</x>></x>": "yes", "<a</x></x>>": "no", "<a</x>": "prefix"}),
    ('start: foo "!"\nfoo[suffix="END", lazy]: /.*/\n', {"abcEND!": "yes", "aENDbEND!": "no", "END!": "yes"}),
    # max_tokens=0: the rule matches the empty string only (llguidance 1.9.1), terminal or not
    ('start: "<" foo ">"\nfoo[max_tokens=0]: /[a-z]+/\n', {"<>": "yes", "<a>": "no", "<": "prefix"}),
    ('start: "<" foo ">"\nfoo[max_tokens=0, stop="."]: bar\nbar: "b"\n', {"<>": "yes", "<b>": "no"}),
    # temperature= alone makes the rule one lexeme (so %ignore cannot come inside it)
    ('start: foo\nfoo[temperature=0.5]: "a" "b"\n%ignore " "\n', {"ab": "yes", "a b": "no"}),
    # repetition, ranges, case-insensitive strings, aliases, ?rule / !rule, priorities
    ('start: "a"{2,3} "b"{2} "c"{1,} ("d"){,1}\n', {"aabbc": "yes", "aaabbccd": "yes", "abbc": "no", "aaaabbc": "no"}),
    ('start: x~3 y~1..2\nx: "x"\ny: "y"\n', {"xxxy": "yes", "xxxyy": "yes", "xxy": "no"}),
    ('start: ("a".."f" | DIGIT)+\nDIGIT: "0".."9"\n', {"c0fe": "yes", "g": "no"}),
    ('start: "select"i " " NAME\nNAME: /[a-zA-Z]+/\n', {"SeLeCt Ab": "yes", "selec": "prefix"}),
    ('?start: pair -> top\n!pair: KEY "=" VAL -> kv\nKEY: /[a-z]+/\nVAL: /[0-9]+/\n', {"ab=12": "yes", "=1": "no"}),
    ('start: item+\n?item: "a" | "b" -> bee\n', {"abba": "yes", "abc": "no"}),
    # terminals built from terminals, comments, `-` in names, %import common
    ('# hash comment\nstart: my-rule\nmy-rule: SIGNED ("," SIGNED)*  // trailing\nSIGNED: SIGN? DIGITS\n'
     'SIGN: "+" | "-"\nDIGITS: /[0-9]+/\n', {"-1,+22,3": "yes", "1,-": "prefix", "--1": "no"}),
    ('%import common.WS\n%import common.ESCAPED_STRING\n%import common (SIGNED_NUMBER, CNAME)\n%ignore WS\n'
     'start: "{" [pair ("," pair)*] "}"\npair: (CNAME | ESCAPED_STRING) ":" (SIGNED_NUMBER | ESCAPED_STRING)\n',
     {'{ a: -1.5e3, "b c": "d" }': "yes", "{a:1,}": "no", "{": "prefix"}),
    # & and ~ in terminals, %regex { substring_* }
    ('start: L\nL: /[a-z \\n]*/ & ~/(?s:.*)\\n\\n(?s:.*)/\n', {"ab\ncd": "yes", "a\n\nb": "no", "a\n": "yes"}),
    ('start: A\nA: /[ab]+/ & /(?:ab)*/ & ~"ab"\n', {"ab": "prefix", "abab": "yes", "aab": "no"}),
    ('start: A+\nA: ~/b/\n', {"a": "yes", "b": "prefix", "xyz": "yes"}),
    ('start: "<" X ">"\nX: %regex {"substring_words": "foo bar. baz  q"}\n',
     {"<foo bar>": "yes", "<bar. baz>": "yes", "<>": "yes", "<fo>": "no", "<o bar>": "no", "<  q>": "yes"}),
    ('start: "<" %regex {"substring_chunks": ["abc", "de", "fg"]} ">"\n',
     {"<abcde>": "yes", "<ab>": "no", "<cde>": "no", "<defg>": "yes"}),
    ('start: "<" %regex {"substring_chars": "ab c"} ">"\n', {"<b c>": "yes", "<ac>": "no"}),
    # %json { schema }: JSON Schema inside a grammar
    ('start: %json {"type": "integer"} ("5" | "a")\n', {"125": "prefix", "12a": "yes", "-0a": "yes"}),
    ('start: "let " NAME " = " %json {"type": "array", "items": {"type": "number"}} ";"\nNAME: /[a-z]+/\n'
     '%ignore " "\n', {"let a = [1, 2] ;": "yes", "let a=[1];": "no", "let a = [ 1 ];": "yes"}),
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_lark_cases_match_llguidance(k):
    text, expected = CASES[k]
    ours = constrain.grammar(text)
    got = _verdicts(text, list(expected), ours)
    assert [(s, llg) for s, _, llg in got] == list(expected.items()), "expected verdicts are llguidance's"
    assert [(s, o) for s, o, _ in got] == list(expected.items())


# -- random small grammars: verdicts equal to llguidance's on random strings ------------------------
_PIECES = ['"a"', '"b"', '"ab"', '"ba"', '"aa"', '" "', '"a "', "/a+/", "/[ab]*/", "/b?/", "/a|ab/",
           "/(ab)+/", "/ ?a/", "A", "B"]
_OPTIONS = ["", "", "", '%ignore " "\n', '%llguidance {"allow_initial_skip": true}\n%ignore /[ ]+/\n',
            '%llguidance {"ignore_once": true}\n%ignore /[ ]{1,2}/\n']


def _random_grammar(rng) -> str:
    """Lexemes that overlap, extend each other or match the empty string, lazy lexemes,
    %ignore with its options: where greedy lexing and the parser interact."""
    def item(depth):
        r = rng.random()
        if r < 0.55 or depth > 2:
            return rng.choice(_PIECES)
        if r < 0.7:
            return rng.choice(["x", "y"])
        alts = " | ".join(seq(depth + 1) for _ in range(rng.randint(1, 3)))
        return f"({alts})" + rng.choice(["", "*", "+", "?", "{1,2}"])

    def seq(depth):
        return " ".join(item(depth) for _ in range(rng.randint(1, 3)))

    g = "start: " + " | ".join(seq(0) for _ in range(rng.randint(1, 2))) + "\n"
    g += f"x: {seq(1)}\ny: {seq(1)} | x y?\n" + 'A: /[ab]/\nB: "b" "a"?\n' + rng.choice(_OPTIONS)
    if rng.random() < 0.25:
        g = g.replace("start: ", "start: z ", 1) + "z[lazy]: /[ab]*b/\n"
    return g


def test_random_grammars_match_llguidance():
    rng = random.Random(33)
    n_grammars = 0
    for _ in range(300 if FULL else 40):  # (ANYTOK_FULL=1: 300 grammars)
        text = _random_grammar(rng)
        if LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_lark(text), log_level=0).is_error():
            continue  # (e.g. an unused rule that matches nothing)
        n_grammars += 1
        strings = [""] + ["".join(rng.choice("ab ") for _ in range(rng.randint(1, 7))) for _ in range(12)]
        for s, ours, llg in _verdicts(text, strings, constrain.grammar(text)):
            assert ours == llg, (text, s)
    assert n_grammars >= 20


# grammars llguidance rejects: anytok rejects them too
BAD = [
    'start: "a" (',
    "start: foo\n",
    'start: A\nA: "a"\nA: "b"\n',
    'start: A\nA: a\na: "x"\n',
    "a: \"x\"\n",
    'start: "a"\n%import other.X\n',
    'start: A\nA: A "a" | "b"\n',
    'start: "a"{3,2}\n',
    'start: A\nA.2: "a"\n',  # priorities: "not supported yet" in llguidance 1.9.1
    'start: item+\nitem.5: "a"\n',
    '%llguidance {"allow_initial_skip": 1}\nstart: "a"\n',
    'start: %regex {"substring_chunks": ["a"], "x": 1}\n',
    'start: X\nX: "a" <|endoftext|>\n',  # special tokens cannot be used in terminals
    'start: <[^*]>\n',
    'start: <[5-3]>\n',
    'start: <[1,*]>\n',
    'start: "a" @sub\n',  # a Lark text alone has no sub-grammar to refer to
    'start: @0\n',
    'start: foo\nfoo[stop=".", suffix="!"]: /[a-z]+/\n',
    'start: foo\nfoo[max_tokens=2]: bar\nbar: "b"\n',  # max_tokens on terminals only
    'start: foo\nfoo[temperature=0.5]: bar\nbar: "b"\n',
    'start: foo\nfoo[lazy]: %json {"type": "integer"}\n',  # %json is not a terminal
    'start: foo\nfoo[temperature=0.5]: "a" %json {"type": "integer"}\n',
    'start: foo\nfoo[lazy, stop="."]: /[a-z]+/\n',  # `lazy` is `suffix=//`: two stops
    'start: foo\nfoo[stop="", lazy]: /[a-z]+/\n',
    'start: foo\nfoo[stop_capture="s"]: /[a-z]+/\n',  # stop_capture needs a stop
    'start: foo\nfoo[bogus]: /[a-z]+/\n',
    # templates: llguidance 1.9.1 says "params not supported yet"
    'start: sep{"a", ","}\nsep{x, s}: x (s x)*\n',
    'start: "a"\n_sep{x, s}: x (s x)*\n',
    # %regex takes exactly one of substring_chunks / substring_words / substring_chars
    'start: X\nX: %regex {"type": "number", "minimum": 0}\n',
    'start: X\nX: %regex {}\n',
    'start: X\nX: %regex {"substring_chars": "ab", "substring_words": "a b"}\n',
]


@pytest.mark.parametrize("text", BAD)
def test_bad_grammars_rejected(text):
    assert LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_lark(text), log_level=0).is_error()
    with pytest.raises(constrain.ConstraintError) as info:
        constrain.grammar(text)
    assert not isinstance(info.value, constrain.UnsupportedFeatureError), "llguidance refuses it: not a gap"


# special tokens that this tokenizer lacks: rejected when a matcher for it is made
BAD_FOR_TOKENIZER = ['start: "a" <|nope|>\n', "start: <hello>\n", "start: <[300000]>\n",
                     "start: <[^5-300000]>\n", "start: <|im_start|>\n"]


@pytest.mark.parametrize("text", BAD_FOR_TOKENIZER)
def test_special_tokens_the_tokenizer_lacks(text):
    assert LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_lark(text), log_level=0).is_error()
    c = constrain.grammar(text)
    with pytest.raises(constrain.GrammarSyntaxError):
        c.matcher(anytok_encoding("cl100k_base"))


# valid for llguidance, not implemented by anytok: a clear error naming the feature
UNSUPPORTED = [
    ('%llguidance {"allow_invalid_utf8": true}\nstart: "a"\n', "allow_invalid_utf8"),
    ('start: foo\nfoo[max_tokens=3]: %json {"type": "integer"}\n', "max_tokens= on a %json rule"),
]


@pytest.mark.parametrize("text,feature", UNSUPPORTED, ids=[f for _, f in UNSUPPORTED])
def test_unsupported_features_named(text, feature):
    assert not LLMatcher(_lltokenizer("cl100k_base"), LLMatcher.grammar_from_lark(text), log_level=0).is_error()
    with pytest.raises(constrain.UnsupportedFeatureError, match=feature) as info:
        constrain.grammar(text)
    assert isinstance(info.value, NotImplementedError)


# -- grammars from elsewhere: random walks ---------------------------------------------------------

def _gbnf_text(name: str) -> str:
    p = CACHE / "grammars" / f"{name}.gbnf"
    assert p.exists(), "run build_scripts/fetch/fetch_llama_cpp.py (build_scripts/test.sh does)"
    return p.read_text()


def _outlines_text(name: str) -> str:
    p = CACHE / "outlines" / f"{name}.lark"
    assert p.exists(), "run build_scripts/fetch/fetch_llama_cpp.py (build_scripts/test.sh does)"
    return p.read_text()


def _pick(rng, allowed, eos):
    ordinary = [t for t in allowed if t != eos]
    return rng.choice(ordinary) if ordinary and rng.random() < 0.95 else rng.choice(allowed)


def _run_walk(name, label, constraint, lark_text, steps, seed, complete_prefixes=None, special=0.0):
    """`special`: the chance of picking a special token (one without bytes) when one is allowed."""
    rng = random.Random(seed)
    eos = _lltokenizer(name).eos_token
    ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_lark(lark_text), log_level=0)
    assert not ref.is_error(), ref.get_error()
    ours = constraint.matcher(anytok_encoding(name))
    picked = []
    plain = TokenTrie.of(anytok_encoding(name)).token_bytes

    def pick(allowed):
        specials = [t for t in allowed if t not in plain] if special else ()
        t = rng.choice(specials) if specials and rng.random() < special else _pick(rng, allowed, eos)
        picked.append(t)
        return t

    walk(name, label, ours, ref, steps, rng, pick, full_allowed=False)
    if complete_prefixes is not None:  # the walk's complete prefixes, for the lark check
        m = constraint.matcher(anytok_encoding(name))
        for i, t in enumerate(picked):
            if t == eos or not m.consume(t):
                break
            if m.is_accepting():
                complete_prefixes.append(anytok_encoding(name).decode(picked[:i + 1]))


WALK_TOKENIZERS = ["o200k_base", "cl100k_base", "llama3"] if FULL else ["o200k_base"]
SEEDS = range(4) if FULL else range(1)
STEPS = 120 if FULL else 30


@pytest.mark.parametrize("tok", WALK_TOKENIZERS)
@pytest.mark.parametrize("gname", GBNF_NAMES)
def test_llama_cpp_gbnf_walks_match_llguidance(gname, tok):
    text = _gbnf_text(gname)
    lark_text = gbnf_to_lark(text)
    ours, via_lark = constrain.gbnf(text), constrain.grammar(lark_text)
    for seed in SEEDS:
        _run_walk(tok, gname, ours, lark_text, STEPS, f"{tok}|{gname}|{seed}")
    _run_walk(tok, gname, via_lark, lark_text, STEPS // 2, f"{tok}|{gname}|lark")


# other tokenizers: cl100k_base, and a SentencePiece .model (Mistral v1, byte fallback)
OTHER = ([(t, g) for t in ("cl100k_base", "mistral_v1") for g in GBNF_NAMES] if FULL else
         [("cl100k_base", "json"), ("cl100k_base", "chess"), ("mistral_v1", "english"), ("mistral_v1", "c")])


@pytest.mark.parametrize("tok,gname", OTHER, ids=[f"{t}-{g}" for t, g in OTHER])
def test_llama_cpp_gbnf_walks_other_tokenizers(tok, gname):
    text = _gbnf_text(gname)
    _run_walk(tok, gname, constrain.gbnf(text), gbnf_to_lark(text), STEPS, f"{tok}|{gname}")


def test_slice_masks_shared_by_signature_match_llguidance():
    """The slicer keeps a part's mask per signature (its product with the lexer state, states
    renamed): identifiers in two grammars restrict the letters slice alike after each letter,
    so the second grammar's masks reuse the first's, and every mask still equals llguidance's."""
    from anytok.constrain.slicer import Slicer

    name = "o200k_base"
    eos = _lltokenizer(name).eos_token
    trie = TokenTrie.of(anytok_encoding(name))
    plain = trie.token_bytes

    def lower(t):
        data = plain.get(t, b"")
        return data.isalpha() and data.islower()

    hits = []
    for k, text in enumerate([
            'start: NAME ("+" NAME)*\nNAME: /[a-z][a-z0-9_]*/',
            'start: "(" NAME ")" | NAME "=" /[0-9]+/\nNAME: /[a-z][a-z0-9_]*/']):
        rng = random.Random(f"signature|{k}")
        ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_lark(text), log_level=0)
        ours = constrain.grammar(text).matcher(anytok_encoding(name))

        def pick(allowed):  # mostly letters: a new lexer state after each token
            letters = [t for t in allowed if lower(t)]
            return rng.choice(letters) if letters and rng.random() < 0.9 else _pick(rng, allowed, eos)

        before = sum(s.memo_hits for s in Slicer.of(trie).slices)
        walk(name, f"signature {k}", ours, ref, 8, rng, pick, full_allowed=False)
        hits.append(sum(s.memo_hits for s in Slicer.of(trie).slices) - before)
    assert hits[1] > 0, hits


def test_whitespace_one_byte_parts_match_llguidance(monkeypatch):
    """After a space or tab in a counted whitespace lexeme (json.gbnf's `"\n" [ \t]{0,20}`), the
    parts of words, of longer free text and the rest allow only their one-byte tokens, found
    without a walk (`slicer._one_byte`); every mask still equals llguidance's."""
    from anytok.constrain import slicer as sl

    name = "o200k_base"
    eos = _lltokenizer(name).eos_token
    plain = TokenTrie.of(anytok_encoding(name)).token_bytes
    text = 'root ::= "{" ws "}" ws\nws ::= | " " | "\\n" [ \\t]{0,20}\n'
    found = []
    real = sl._one_byte

    def counting(*args):
        r = real(*args)
        found.append(r is not None)
        return r

    monkeypatch.setattr(sl, "_one_byte", counting)
    rng = random.Random("one byte")
    ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_lark(gbnf_to_lark(text)), log_level=0)
    ours = constrain.gbnf(text).matcher(anytok_encoding(name))

    def pick(allowed):  # mostly whitespace tokens: the counting states
        ws = [t for t in allowed if t in plain and not plain[t].strip(b" \t\n")]
        return rng.choice(ws) if ws and rng.random() < 0.9 else _pick(rng, allowed, eos)

    walk(name, "one byte", ours, ref, 6, rng, pick, full_allowed=False)
    assert any(found), found


def test_right_recursion_keeps_one_earley_set():
    """`atom: "-" atom`: after each "-" the Earley set is the same node (an item that completes
    once advanced stands for what completing its own nonterminal leads to, `States._ctx`), so
    the states and masks are reused however deep the output nests; every mask equals
    llguidance's."""
    text = 'start: sum\nsum: atom | sum "+" atom\natom: "-" atom | /[0-9]+/ | "(" sum ")"\n'
    name = "o200k_base"
    enc = anytok_encoding(name)
    ours = constrain.grammar(text).matcher(enc)
    ref = LLMatcher(_lltokenizer(name), LLMatcher.grammar_from_lark(text), log_level=0)
    minus = enc.encode("-")[0]
    nodes = []
    for step in range(12):
        assert ours.mask() == _ref_mask(name, ref), step
        assert ours.consume(minus) and ref.consume_token(minus)
        nodes.append(len(ours._sh.es.nodes))
    seven = enc.encode("7")[0]
    assert ours.consume(seven) and ref.consume_token(seven) and ours.mask() == _ref_mask(name, ref)
    assert ours.is_accepting() and nodes[-1] == nodes[2], nodes


@pytest.mark.parametrize("tok", WALK_TOKENIZERS)
@pytest.mark.parametrize("gname", OUTLINES_NAMES)
def test_outlines_grammar_walks_match_llguidance(gname, tok):
    text = _outlines_text(gname)
    c = constrain.grammar(text)
    for seed in SEEDS:
        _run_walk(tok, gname, c, text, STEPS, f"{tok}|outlines|{gname}|{seed}")


JSON_GRAMMARS = [
    'start: "x" %json {"type": "integer"} "y"\n',
    'start: foo "," foo\nfoo[temperature=0.5]: %json {"type": "array", "items": {"type": "integer"}}\n',
    'start: %json {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}'
    ' ("," %json {"type": "string"})*\n',
    'start: "<" %json {} ">"\n',
]


@pytest.mark.parametrize("k", range(len(JSON_GRAMMARS)))
def test_json_in_grammar_walks_match_llguidance(k):
    text = JSON_GRAMMARS[k]
    c = constrain.grammar(text)
    for seed in SEEDS:
        _run_walk("o200k_base", text[:40], c, text, STEPS, f"json|{k}|{seed}")


# special tokens and token ranges (llguidance's docs/syntax.md "Special tokens"): masks and
# forced tokens equal to llguidance's, walks that often pick the special tokens.  (The EOS
# token is left out of these grammars: llguidance 1.9.1 panics consuming it as a grammar's
# special token where the output is not complete, and loses its state rolling back over it.)
SPECIAL_GRAMMARS = [
    ("o200k_base", 'start: /[a-z]{8,20}/ <|endofprompt|> "b" /[0-9]{20,40}/\n'),
    ("o200k_base", 'start: (TEXT <|endofprompt|>)+ <|endoftext|>?\nTEXT: /[a-z ]{1,12}/\n'),
    ("o200k_base", 'start: /[a-z]+/ <[100-105,200]> "q" <[^5-200000]>\n'),
    ("o200k_base", 'start: TEXT | fun_call\nTEXT: /[^{](.|\\n)*/\n'
                   'fun_call: <|endofprompt|> %json {"type": "object"} <|endoftext|>\n'),
    ("o200k_base", '%ignore " "\nstart: ("a" <[5]>)+ <[*]>\n'),
    ("o200k_base", 'start: x* "."\nx: "a" <|endofprompt|> "b" | <[199990-200010]> "c" | <[200000]> "d"\n'),
    ("o200k_base", 'start: think answer\nthink: <[200005]> /[a-z ]{0,20}/ <[200006]>\nanswer: /[0-9]+/\n'),
    ("cl100k_base", 'start: <|fim_prefix|> /[a-z]{1,5}/ <|fim_suffix|> /[a-z]{1,5}/ <|fim_middle|>\n'),
    ("mistral_v1", 'start: <s> /[a-z ]{1,20}/ <unk> <[5-10]>\n'),
]


@pytest.mark.parametrize("k", range(len(SPECIAL_GRAMMARS)))
def test_special_token_walks_match_llguidance(k):
    tok, text = SPECIAL_GRAMMARS[k]
    c = constrain.grammar(text)
    for seed in SEEDS if FULL else range(3):
        _run_walk(tok, text[:40], c, text, STEPS, f"special|{k}|{seed}", special=0.4)


# `stop=` (string or regex): a lazy lexeme ending with the stop, whose bytes are hidden: no
# token goes on past them in a mask (so ".!" is not allowed where "." stops `foo` and "!"
# follows); a token that does (consumed without the mask) has its bytes past the stop dropped
STOP_GRAMMARS = [
    'start: foo "!"\nfoo[stop="."]: /[a-z ]+/\n',
    'start: foo /[0-9]+/\nfoo[stop="ab"]: /[a-z ]+/\n',
    'start: (foo ",")+\nfoo[stop=/[.!]/]: /[a-z]+/\n',
    'start: (foo ",")+\nfoo[suffix=/[.!]/]: /[a-z]+/\n',
    'start: foo bar\nfoo[stop="</x>"]: /(.|\\n)*/\nbar: /[a-z]+/\n',
]


@functools.lru_cache(maxsize=None)
def _stop_near() -> frozenset:
    """o200k_base tokens with (part of) one of STOP_GRAMMARS' stops in them."""
    tb = TokenTrie.of(anytok_encoding("o200k_base")).token_bytes
    return frozenset(t for t, b in tb.items() if any(k in b for k in (b".", b"!", b"ab", b",", b"</", b"x>")))


@pytest.mark.parametrize("k", range(len(STOP_GRAMMARS)))
def test_stop_walks_match_llguidance(k):
    eos = anytok_encoding("o200k_base").eot_token

    def pick(rng, allowed):  # often a token with (part of) a stop in it
        pool = [t for t in allowed if t != eos] or allowed
        near = [t for t in pool if t in _stop_near()]
        return rng.choice(near if near and rng.random() < 0.3 else pool)

    _walks_no_rollback(STOP_GRAMMARS[k], f"stop|{k}", pick)


def _walks_no_rollback(text, label, pick):
    """Seeded walks of `text` on o200k_base (3; `SEEDS` under ANYTOK_FULL=1), each token chosen
    by `pick(rng, allowed)`, compared with llguidance at every step (`_walk_no_rollback`)."""
    c = constrain.grammar(text)
    enc = anytok_encoding("o200k_base")
    for seed in SEEDS if FULL else range(3):
        rng = random.Random(f"{label}|{seed}")
        ref = LLMatcher(_lltokenizer("o200k_base"), LLMatcher.grammar_from_lark(text), log_level=0)
        _walk_no_rollback(text, c.matcher(enc), ref, rng, lambda allowed: pick(rng, allowed))


def _walk_no_rollback(text, ours, ref, rng, pick):
    """A walk compared with llguidance at every step, for grammars with `stop=` or
    `max_tokens=`, whose rollback llguidance 1.9.1 refuses; anytok's rollback is checked
    against anytok's own masks on the way."""
    masks, tokens = [], []
    for step in range(STEPS):
        masks.append(_check_same("o200k_base", text[:40], step, ours, ref, rng, full_allowed=False))
        token = pick(ours.allowed())
        assert ours.consume(token) and ref.consume_token(token)
        tokens.append(token)
        if ours.is_stopped():
            break
    final = _check_same("o200k_base", text[:40], len(tokens), ours, ref, rng, full_allowed=False)
    k = min(3, ours.num_tokens)
    ours.rollback(k)
    for i in range(ours.num_tokens, ours.num_tokens + k):
        assert ours.mask() == masks[i] and ours.consume(tokens[i])
    assert ours.mask() == final


# `max_tokens=` on a terminal rule: after a token that leaves the lexeme's Earley set touched
# by that many tokens (the token that started the set counts), the lexeme may not grow: it
# ends there (llguidance's row token counts, limit_state_to and forced end of input)
MAX_TOKENS_GRAMMARS = [
    'start: foo "!"\nfoo[max_tokens=2]: /[a-z ]+/\n',
    'start: "x" foo\nfoo[max_tokens=3]: /[0-9]+/\n',
    'start: (foo ",")+ bar\nfoo[max_tokens=3]: /[a-z ]+/\nbar[max_tokens=5]: /[0-9]+/\n',
    '%ignore " "\nstart: (foo | NUM)+\nfoo[max_tokens=2]: /[a-z]+/\nNUM: /[0-9]+/\n',
    'start: foo+\nfoo[max_tokens=4]: /[a-z]{1,30}/ | /[0-9]+/\n',
    'start: "a" foo "b"\nfoo[max_tokens=1]: /[0-9]*/\n',
    # cut short: the lexeme ends at its max_tokens whether or not it matches (llguidance's
    # forced end of the lexeme)
    'start: foo "!"\nfoo[max_tokens=2]: /[a-z]{6}/\n',
    # with stop= / suffix= / lazy: a lazy lexeme with a token budget
    'start: (foo ",")+\nfoo[max_tokens=3, stop="."]: /[a-z ]+/\n',
    'start: foo "!" bar\nfoo[max_tokens=2, suffix=";"]: /[a-z]+/\nbar[lazy, max_tokens=3]: /[0-9]+x/\n',
    'start: (foo | bar)+\nfoo[stop=/[.!]/, max_tokens=4]: /[a-z]+/\nbar[max_tokens=2, temperature=0.5]: "1" "2"\n',
]


@pytest.mark.parametrize("k", range(len(MAX_TOKENS_GRAMMARS)))
def test_max_tokens_walks_match_llguidance(k):
    eos = anytok_encoding("o200k_base").eot_token
    _walks_no_rollback(MAX_TOKENS_GRAMMARS[k], f"max_tokens|{k}", lambda rng, allowed: _pick(rng, allowed, eos))


# stop="" (llguidance: "the EOS token of the model acts as the stop"): the rule is a greedy
# lexeme that end-of-sequence may also end where its bytes match it and bytes are pending
# (EOS is then in the mask); consuming that EOS ends the lexeme, the output goes on, and
# that one step has no forced tokens (llguidance forces bytes once per output length).
# The walks pick EOS often where it is allowed.
STOP_EOS_GRAMMARS = [
    'start: foo "!"\nfoo[stop=""]: /[a-z]+/\n',
    'start: foo\nfoo[stop=""]: /[a-z]+/\n',
    'start: foo bar?\nfoo[stop=""]: /[a-z ]+/\nbar: /[0-9]+/\n',
    'start: (foo ",")+\nfoo[stop=""]: /[a-z]+/\n',
    'start: foo "a" bar\nfoo[stop=""]: /[0-9]+/\nbar[stop="", max_tokens=3]: /[a-z]+/\n',
    '%ignore " "\nstart: foo+ "."\nfoo[stop=""]: /[a-z]+/\n',
    'start: "<" foo "|" foo ">"\nfoo[stop=""]: /[a-z]*/\n',
    'start: "Q: " foo "\\nA: " foo\nfoo[stop="", temperature=0.7]: /[^\\n]+/\n',
]


def _pick_eos(rng, allowed):
    eos = anytok_encoding("o200k_base").eot_token
    if eos in allowed and rng.random() < 0.4:
        return eos
    return rng.choice([t for t in allowed if t != eos] or allowed)


@pytest.mark.parametrize("k", range(len(STOP_EOS_GRAMMARS)))
def test_stop_eos_walks_match_llguidance(k):
    _walks_no_rollback(STOP_EOS_GRAMMARS[k], f"stop_eos|{k}", _pick_eos)


def test_suffix_empty_is_stop_empty():
    """suffix="" is stop="" (nothing to hide either way): llguidance allows EOS in the same
    places, but 1.9.1 panics at the next mask once EOS has ended a suffix="" lexeme (its
    lexer-bytes check, which it runs where rollback is allowed); anytok goes on as with stop=""."""
    enc = anytok_encoding("o200k_base")
    for k, text in enumerate(STOP_EOS_GRAMMARS[:4]):
        suffix_text = text.replace('stop=""', 'suffix=""')
        rng = random.Random(f"suffix_eos|{k}")
        ours, same = constrain.grammar(suffix_text).matcher(enc), constrain.grammar(text).matcher(enc)
        ref = LLMatcher(_lltokenizer("o200k_base"), LLMatcher.grammar_from_lark(suffix_text), log_level=0)
        live = True  # llguidance, until an EOS ends a lexeme
        for step in range(STEPS):
            if live:
                _check_same("o200k_base", suffix_text[:40], step, ours, ref, rng, full_allowed=False)
            assert ours.mask() == same.mask() and ours.forced() == same.forced()
            token = _pick_eos(rng, ours.allowed())
            assert ours.consume(token) and same.consume(token)
            if live:
                assert ref.consume_token(token)
            live = live and token != enc.eot_token
            if ours.is_stopped():
                break


# %llguidance {"no_forcing": true}: no forced tokens; every mask is the walk from the state
# (forced bytes, special tokens and an endless forced run included)
NO_FORCING = '%llguidance {"no_forcing": true}\n'
NO_FORCING_GRAMMARS = [
    NO_FORCING + 'start: "hello world" /[0-9]+/ "endofthings"\n',
    NO_FORCING + 'start: /[a-z]+/ <|endofprompt|> "xyz" <|endofprompt|>\n',
    NO_FORCING + '%ignore " "\nstart: "ab" "cd" x\nx: /(ab)+/ " "\n',
]


@pytest.mark.parametrize("k", range(len(NO_FORCING_GRAMMARS) + 1))
def test_no_forcing_walks_match_llguidance(k):
    if k < len(NO_FORCING_GRAMMARS):
        text = NO_FORCING_GRAMMARS[k]
    else:  # llama.cpp's json grammar, with the option
        text = gbnf_to_lark(_gbnf_text("json")).replace("%llguidance {}", NO_FORCING.strip())
    c = constrain.grammar(text)
    assert not c.matcher(anytok_encoding("o200k_base")).forced()
    for seed in SEEDS if FULL else range(2):
        _run_walk("o200k_base", text[:40], c, text, STEPS, f"no_forcing|{k}|{seed}", special=0.3)


def test_rule_temperature_accepted_masks_unchanged():
    """`temperature` changes sampling only: the masks are llguidance's (and the same as without it)."""
    text = 'start: foo " " bar\nfoo[temperature=0.7]: /[a-z]+/\nbar[lazy, temperature=0.2]: /[0-9]+/ "."\n'
    _run_walk("o200k_base", "temperature", constrain.grammar(text), text, STEPS, "temperature")


# -- lark's Earley parser as an independent check ----------------------------------------------------

def _for_lark(lark_text: str) -> str:
    """llguidance's dialect -> lark's: drop the %llguidance line, `x{m,n}` -> `x ~ m..n`."""
    text = re.sub(r"(?m)^%llguidance \{\}\n", "", lark_text)

    def rep(m):
        lo, hi = m.group(1), m.group(2)
        return f" ~ {lo}" if hi is None else f" ~ {lo}..{hi}"

    return re.sub(r"\{(\d+)(?:,(\d+))?\}", rep, text)


@functools.lru_cache(maxsize=None)
def _lark_parser(lark_text: str):
    return lark.Lark(_for_lark(lark_text), start="start", parser="earley", lexer="dynamic")


def _lark_accepts(lark_text: str, s: str) -> bool:
    try:
        _lark_parser(lark_text).parse(s)
        return True
    except lark.exceptions.LarkError:
        return False


# (grammar source, samples lark and anytok both accept, samples both reject); lark cannot load
# json.gbnf, json_arr.gbnf (the empty terminal `WS: ""`) nor arithmetic.gbnf (a terminal that
# matches the empty string) as gbnf_to_lark writes them.
LARK_SAMPLES = [
    ("gbnf", "c", ["int main(){return 0;}", "int f(int x){x = x+1;}"], ["int main(", "int 1x(){}"]),
    ("gbnf", "japanese", ["こんにちは"], ["abc"]),
    ("gbnf", "chess", ["1. e4 e5\n2. Nf3 Nc6\n"], ["1. e9"]),
    ("gbnf", "list", ["- apples\n- pears\n"], ["apples"]),
    ("gbnf", "english", ["I like tea."], ["tea\n\n", "\u00e9"]),
    ("outlines", "json", ['{"a": [1, -2.5, "x"], "b": {}}'], ["{a: 1}"]),
    ("outlines", "arithmetic", ["1 + 2 * (3 - 4)"], ["1 +"]),
]


@pytest.mark.parametrize("src,gname,good,bad", LARK_SAMPLES, ids=[f"{s}-{g}" for s, g, _, _ in LARK_SAMPLES])
def test_acceptance_matches_lark_earley(src, gname, good, bad):
    if src == "gbnf":
        lark_text = gbnf_to_lark(_gbnf_text(gname))
        c = constrain.gbnf(_gbnf_text(gname))
    else:
        lark_text = _outlines_text(gname)
        c = constrain.grammar(lark_text)
    for s in good:
        assert _lark_accepts(lark_text, s), s
        assert _verdict_bytes(c, s) == "yes", s
    for s in bad:
        assert not _lark_accepts(lark_text, s), s
        assert _verdict_bytes(c, s) != "yes", s
    prefixes: list = []
    tok = "o200k_base"
    _run_walk(tok, gname, c, lark_text, 40 if FULL else 16, f"lark|{gname}", prefixes)
    for p in prefixes:
        assert _lark_accepts(lark_text, p), p


def _verdict_bytes(c, s: str) -> str:
    m = c.matcher(anytok_encoding("cl100k_base"))
    return _feed_bytes(s, m.consume, m.is_accepting)


# -- limits and depth ----------------------------------------------------------------------------------

def test_deep_nesting_needs_no_recursion():
    """5000 levels of nesting in the output: no RecursionError (the parser loops, never recurses)."""
    c = constrain.grammar('start: "(" start ")" | "x"\n')
    s = "(" * 5000 + "x" + ")" * 5000
    assert _verdict_bytes(c, s) == "yes"
    assert _verdict_bytes(c, s[:-1]) == "prefix"


def test_endless_forced_bytes_as_llguidance():
    """`" "` in the grammar is shadowed by `%ignore " "` (an ignored match wins), so after "ab"
    only spaces can follow a space, forever; llguidance forces spaces until its budget (50,000
    bytes here) runs out: the mask is the first forced token, the forced tokens those of 50,000
    spaces less the last one, the output neither complete nor stopped.  anytok does the same."""
    text = 'start: x "b"\nx: /(ab)+/ " "\n%ignore " "\n'
    enc = anytok_encoding("o200k_base")
    m = constrain.grammar(text).matcher(enc)
    ref = LLMatcher(_lltokenizer("o200k_base"), LLMatcher.grammar_from_lark(text), log_level=0)
    for t in enc.encode("ab "):
        assert m.consume(t) and ref.consume_token(t)
    assert m.mask() == _ref_mask("o200k_base", ref) and len(m.allowed()) == 1
    assert m.forced() == ref.compute_ff_tokens() and len(m.forced()) > 300
    assert not m.is_accepting() and not ref.is_accepting()
    assert not m.is_stopped() and not ref.is_stopped()


def test_blow_up_grammars_fail_within_budget():
    t = time.process_time()
    with pytest.raises(GrammarLimitError, match="max_symbols"):
        constrain.grammar('start: "a"{0,10000000}\n')
    with pytest.raises(GrammarLimitError, match="max_symbols"):
        constrain.grammar("start: " + " ".join(['"a"?'] * 300_000) + "\n")
    # `a?` 10,000 times: the first Earley set alone is past the item budget (llguidance's own
    # budget, 2000 items in a row, stops it at the first token)
    with pytest.raises(GrammarLimitError, match="max_items_in_set"):
        constrain.grammar("start: " + " ".join(['"a"?'] * 10_000) + "\n")
    # exponentially ambiguous: the Earley sets grow with the input; a matcher stops with the
    # error, unchanged
    c = constrain.grammar('start: s\ns: s s | s s s | "a"\n', limits=Limits(max_items_in_set=500))
    m = c.matcher(anytok_encoding("cl100k_base"))
    a = _byte_tokens("cl100k_base")[ord("a")]
    with pytest.raises(GrammarLimitError, match="max_items_in_set"):
        for _ in range(400):
            assert m.consume(a)
    n = m.num_tokens
    with pytest.raises(GrammarLimitError):
        m.consume(a)
    assert m.num_tokens == n
    assert time.process_time() - t < 30
