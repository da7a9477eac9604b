"""JSON Schema -> the builder's rule trees of JSON texts (one lexeme), as llguidance 1.9.1
compiles schemas.

Data flow: `schema_rules(schema)` (`compile.py`) checks the nesting (`keywords.check_depth`),
reads the top-level `x-guidance` options (`options.py`), asks `normalized.py` for llguidance's
verdict on the schema's `oneOf`s, then walks the schema and builds the rule trees (the node
kinds of `builder.py`: `{"start": tree, rule name: tree}`) of every JSON text the schema
allows; `compile_schema(schema)` has them lowered by the builder's lexeme compiler
(`terminals.Terminals`, a fork of a per-process template in which the lexemes no schema
changes are lowered already, `compile._Shared`) into one `derivatives.ExprSet` expression.
This package writes no expressions itself: it asks the `Terminals` only whether a tree is
empty (`empty`: a lexeme, a product, a `conj`) and whether a byte string matches a tree
(`terminals.probe`: constants and keys against patterns).  On the way each subschema is read
keyword by keyword (`keywords.py`); `allOf`, `$ref` and the keywords beside `anyOf`/`oneOf`
are merged into one schema (`merge.py`); `$ref` targets are found (`refs.py`) and compiled once
each as a recursive rule (`("rec", name)`, expanded lazily by the derivatives); `const`/`enum`
are filtered by their siblings and written out (`constants.py`); numbers become llguidance's
range regexes and remainder automata (`numbers.py`, the automaton's states as rules); strings
are JSON-quoted regex trees of `pattern`s (searched for) and `format`s (`strings.py`,
`formats.py`); a `oneOf` is an `anyOf` where its options are proven disjoint (`disjoint.py`,
the one check, also used by `normalized.py`).  With llguidance's default JSON
settings (measured against llguidance, see the tests):

* lexemes: `{ } [ ] , :`, `null`, `true|false`, numbers, each whole string (with its quotes)
  and each property key; JSON whitespace (`[ \\t\\n\\r]*`) is allowed between any two lexemes,
  never before the first or after the last (`strip_leading` removes it at the start);
* properties in the order of `properties`, then the `required` names not listed there, then
  any number of additional properties (JSON Schema's default: any value), comma-separated; a
  named property appears at most once, additional keys are any other string (a key spelled
  differently from a named one, e.g. with a `\\u` escape, counts as additional);
* strings: any code point except `"`, `\\`, U+0000-U+001F and U+007F, which must be escaped
  (`\\"`, `\\\\`, `\\b \\f \\n \\r \\t`, or `\\u00XX` for the control characters); no other
  escapes (`\\/`, `\\u0041` are rejected), except in additional property keys, which also take
  any `\\uXXXX` escape of a scalar value (a surrogate pair as one character); a pattern class
  with every control character also takes `\\"` and `\\\\` (llguidance's quoting, `quote_tree`);
* `pattern` is searched for (unanchored unless `^`/`$`), with ASCII `\\d` and `\\w`; lengths
  count code points (an escape is one); pattern, format and lengths together are intersected
  lazily (a `conj` tree, `ExprSet.conj`: derivatives of each side taken on demand, as
  derivre's `And`);
* numbers: `-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?`; integers `-?(0|[1-9][0-9]*)`; with
  bounds, llguidance's range languages, quirks included (`float_regex`, `int_regex`: no
  exponents, `-0` only where its range regex has it, ...); `multipleOf` intersects them with
  llguidance's digit-by-digit remainder automaton (`multiples`);
* objects also with `patternProperties` (keys: the JSON-quoted pattern, searched for; patterns
  must be disjoint; additional keys exclude them, an `and`/`not` tree; a named property a
  pattern matches takes both schemas, also when `allOf` merges them: `intersect`) and
  `minProperties`/`maxProperties` where llguidance has them; arrays with `prefixItems` (or
  draft-2019 `items` arrays and `additionalItems`), `minItems`, `maxItems`;
* `enum`/`const` (with `type` and string/number keywords next to them filtering the values),
  `anyOf`, `allOf` of one schema; `oneOf` as `anyOf` where llguidance proves its options
  disjoint once merged with their siblings (else refused);
* `$ref` (JSON pointers, `$id`s and anchors within the document, recursion allowed) and
  `{}`/`true` (any JSON value) become recursive rules (`("rec", name)`; `ExprSet.new_rule`
  once lowered), expanded lazily by the derivatives; keywords the root's `$schema` draft does
  not know are ignored;
* top-level `"x-guidance"` options (`JsonOptions`), as llguidance reads them:
  `whitespace_flexible` (false: no whitespace), `whitespace_pattern` (a regex: at most one match
  of it before each lexeme, replacing JSON whitespace), `item_separator`/`key_separator`
  (regexes, each one lexeme), `coerce_one_of` (oneOf as anyOf), `lenient` (oneOf as anyOf;
  keywords llguidance does not implement, unknown formats and min/maxProperties beyond its
  special cases ignored, as llguidance ignores them with a warning); patterns whose bytes
  could make llguidance's greedy lexer split a text differently, and non-default
  `json_allowed_escapes`/`json_allow_general_unicode_escapes`, raise UnsupportedFeatureError.

The result is a single lexeme (one expression once lowered; a `GrammarBuilder` given the rules
of `schema_rules` compiles it the same way), so `matcher.py` serves it exactly as a regex:
llguidance's lexer and Earley parser accept the same byte strings here, because every lexeme of
these grammars ends where the next one starts with a byte the lexeme cannot continue with.

Whatever llguidance implements and this package does not raises `UnsupportedFeatureError`
naming it; schemas llguidance rejects (malformed, unsatisfiable, unknown formats) raise
`ConstraintError`.
"""

from .compile import compile_schema, schema_rules
from .formats import FORMATS
from .keywords import check_depth
from .options import JsonOptions
from .strings import quote_tree

__all__ = ["FORMATS", "JsonOptions", "check_depth", "compile_schema", "quote_tree", "schema_rules"]
