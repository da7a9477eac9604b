"""constrain's budgets (`Limits`) bound time and memory on hostile inputs.

A generated family of grammars, regexes and JSON Schemas that would otherwise run for minutes,
take gigabytes or overflow Python's stack — repetitions of optional items (`("a"?){N} "a"{N}`),
deep nesting of Lark, GBNF, regex and JSON Schema text, exponential ambiguity, huge counted
repetitions — runs in a child process whose address space is capped at 512 MB above what the
loaded tokenizer takes (`resource.setrlimit(RLIMIT_AS)`), each case under a watchdog (20 s of CPU time).
Each case must end in the named error: `GrammarLimitError` whose message names the budget
(`Limits.<name>`), or for stacked Lark repetition operators the `GrammarSyntaxError` llguidance
gives too; never a RecursionError, a MemoryError or the watchdog.  The child prints the CPU
time of each case (reported, not asserted: see docs/constrain.md#limits for the figures).
By default a seeded sample of the family runs; ANYTOK_FULL=1 runs all of it.

The budgets are raisable: the same inputs with larger `Limits` get further (or through).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from anytok import constrain
from anytok.constrain import GrammarLimitError, GrammarSyntaxError, Limits
from conftest import FULL

ROOT = Path(__file__).resolve().parents[1]


def family() -> list:
    """(name, kind, text, expected error class name, text the message must contain)."""
    lim = "GrammarLimitError"
    out = []
    for n in (3000, 5000, 20000):
        # (per step, or in one Earley set for the widest)
        out.append((f"lark-opt-{n}", "grammar", f'start: ("a"?){{{n}}} "a"{{{n}}}', lim, "Earley"))
        out.append((f"gbnf-opt-{n}", "gbnf", f'root ::= ("a"?){{{n}}} "a"{{{n}}}', lim, "Earley"))
        out.append((f"regex-opt-{n}", "regex", f"(a?){{{n}}}a{{{n}}}", lim, "Limits.step_lexer_fuel"))
        out.append((f"json-opt-{n}", "json_schema",
                    json.dumps({"type": "string", "pattern": f"^(a?){{{n}}}a{{{n}}}$"}), lim, "Limits.step_lexer_fuel"))
    for d in (150, 198, 1000, 5000):
        out += [
            (f"lark-nest-{d}", "grammar", "start: " + "(" * d + '"a"' + ")" * d, lim, "Limits.max_nesting"),
            (f"lark-alt-nest-{d}", "grammar", "start: " + '("b" | ' * d + '"a"' + ")" * d, lim, "Limits.max_nesting"),
            (f"lark-opt-nest-{d}", "grammar", "start: " + "[" * d + '"a"' + "]" * d, lim, "Limits.max_nesting"),
            (f"lark-not-nest-{d}", "grammar", "start: A\nA: " + "~" * d + '"a"', lim, "Limits.max_nesting"),
            (f"lark-postfix-{d}", "grammar", 'start: "a"' + "?" * d, "GrammarSyntaxError", "second repetition"),
            (f"lark-terminal-chain-{d}", "grammar",
             "start: T0\n" + "".join(f"T{i}: T{i + 1}\n" for i in range(d)) + f'T{d}: "a"\n', lim, "Limits.max_nesting"),
            (f"lark-regex-nest-{d}", "grammar", "start: /" + "(" * d + "a" + ")" * d + "/", lim, "Limits.max_nesting"),
            (f"gbnf-nest-{d}", "gbnf", "root ::= " + "(" * d + '"a"' + ")" * d, lim, "Limits.max_nesting"),
            (f"regex-nest-{d}", "regex", "(" * d + "a" + ")" * d, lim, "Limits.max_nesting"),
            (f"regex-alt-nest-{d}", "regex", "(b|" * d + "a" + ")" * d, lim, "Limits.max_nesting"),
            (f"regex-class-nest-{d}", "regex", "[" * d + "a" + "]" * d, lim, "Limits.max_nesting"),
            (f"regex-postfix-{d}", "regex", "a" + "{2}" * d, lim, "Limits.max_nesting"),
            # (150 arrays compile; 198 pass the up-front depth check but not the compiler's
            # recursion: refused by name; deeper ones by the depth check)
            (f"json-nest-{d}", "json_schema", '{"type":"array","items":' * d + '{"type":"integer"}' + "}" * d,
             *{150: ("ok", ""), 198: ("UnsupportedFeatureError", "nested this deeply")}.get(d, (lim, "nested"))),
            (f"json-anyof-nest-{d}", "json_schema",
             '{"anyOf":[{"type":"string"},' * d + '{"type":"integer"}' + "]}" * d, lim, "nested"),
            (f"json-pattern-nest-{d}", "json_schema",
             json.dumps({"type": "string", "pattern": "(" * d + "a" + ")" * d}), lim, "Limits.max_nesting"),
        ]
    # groups within the nesting budget, each with stacked repetitions within it too: 2**90 a's
    out.append(("regex-stacked-groups", "regex", "(" * 10 + "a" + "{2}" * 80 + ")" * 10, lim, "Limits.step_lexer_fuel"))
    out.append(("regex-postfix-40", "regex", "a" + "{2}" * 40, lim, "Limits.step_lexer_fuel"))
    out.append(("regex-huge-count", "regex", "(abc){1000000000}", lim, "Limits.step_lexer_fuel"))
    out.append(("regex-huge-count-nested", "regex", "((a{1000}){1000}){1000}", lim, "Limits.step_lexer_fuel"))
    out.append(("lark-huge-count", "grammar", 'start: "a"{100000000}', lim, "Limits.max_symbols"))
    out.append(("lark-huge-count-terminal", "grammar", 'start: A\nA: "a"{100000000}', lim, "Limits.step_lexer_fuel"))
    out.append(("gbnf-huge-count", "gbnf", 'root ::= "a"{100000000}', lim, "Limits.max_symbols"))
    # (a lower bound lets any text through: nothing to force, one expression per length)
    out.append(("json-huge-minlength", "json_schema", json.dumps({"type": "string", "minLength": 100000000}),
                "ok", ""))
    # (a 400,000-byte literal: more expressions than the JSON compile budget allows)
    out.append(("json-huge-const", "json_schema", json.dumps({"const": "ab" * 200_000}), "UnsupportedFeatureError",
                "compile budget"))
    return out


CHILD = r"""
import json, resource, signal, sys, time
import anytok
from anytok import constrain

enc = anytok.get_encoding("cl100k_base")
constrain.regex("a").matcher(enc).mask()  # the token trie, built once
vm = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.getrlimit(resource.RLIMIT_AS)[1]))


def watchdog(*_):
    raise TimeoutError("watchdog")


signal.signal(signal.SIGVTALRM, watchdog)  # (CPU time: the machine may be shared)
for name, kind, text in json.loads(sys.stdin.read()):
    t = time.process_time()
    signal.setitimer(signal.ITIMER_VIRTUAL, 20)
    try:
        m = getattr(constrain, kind)(text).matcher(enc)
        m.mask()
        for _ in range(3):
            m.consume(m.allowed()[0])
            m.mask()
        r = ("ok", "")
    except Exception as e:
        r = (type(e).__name__, str(e))
    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    print(json.dumps([name, r[0], r[1][:300], round(time.process_time() - t, 3)]), flush=True)
"""


def _sample() -> list:
    cases = family()
    if FULL:
        return cases
    return random.Random(47).sample(cases, 24)


def test_hostile_family_ends_in_named_errors():
    cases = _sample()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "pkg"))
    p = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps([c[:3] for c in cases]),
                       capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    results = {r[0]: r[1:] for r in map(json.loads, p.stdout.splitlines())}
    wrong = []
    for name, _kind, _text, error, needle in cases:
        got, message, cpu = results[name]
        print(f"{name}: {got} in {cpu} s CPU: {message[:100]}")
        if (got, needle in message) != (error, True):
            wrong.append((name, got, message))
    assert not wrong


def test_limits_raise():
    """A budget is an option: the same input with a larger budget gets further."""
    text = 'start: ("a"?){300} "a"{300}'
    with pytest.raises(GrammarLimitError, match="Limits.step_max_items"):
        m = constrain.grammar(text, limits=Limits(step_max_items=2000)).matcher(anytok_encoding())
        m.mask()
    m = constrain.grammar(text, limits=Limits(step_max_items=10**6)).matcher(anytok_encoding())
    assert m.mask() and not m.is_accepting()
    with pytest.raises(GrammarLimitError, match="Limits.max_nesting"):
        constrain.regex("(" * 30 + "a" + ")" * 30, limits=Limits(max_nesting=20))
    with pytest.raises(GrammarLimitError, match="Limits.max_nesting"):
        constrain.grammar("start: " + "(" * 30 + '"a"' + ")" * 30, limits=Limits(max_nesting=20))
    constrain.grammar("start: " + "(" * 90 + '"a"' + ")" * 90)
    with pytest.raises(ValueError):
        Limits(max_nesting=1000)
    with pytest.raises(GrammarSyntaxError, match="second repetition"):
        constrain.grammar('start: "a"?*')


def test_fuel_error_leaves_matcher_usable():
    """Past the lexer fuel, the matcher method raises and the matcher is unchanged; with more
    fuel the same state is served."""
    c = constrain.regex("(abc){1000000000}", limits=Limits(step_lexer_fuel=20_000))
    m = c.matcher(anytok_encoding())
    with pytest.raises(GrammarLimitError, match="Limits.step_lexer_fuel"):
        m.mask()
    assert m.num_tokens == 0
    abc = anytok_encoding().encode("abc")
    assert m.consume(abc[0])
    assert m.num_tokens == 1


def anytok_encoding():
    import anytok

    return anytok.get_encoding("cl100k_base")
