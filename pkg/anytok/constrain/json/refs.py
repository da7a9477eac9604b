"""`$ref`s: JSON pointers, `$id`s and anchors resolved within the document (`RefsMixin`), each
target compiled once as a grammar rule expanded lazily."""

from __future__ import annotations

import re
from urllib.parse import unquote, urldefrag, urljoin

from ..errors import ConstraintError, UnsupportedFeatureError

_BASE = "https://json-schema.invalid/"  # a document's base URI when it has no $id

def _follow_pointer(target, pointer: str, uri: str, where: str):
    """The part of `target` a JSON pointer (`/a/0/b`, percent- and ~-escaped; "" for all of it)
    names, for `$ref` `uri` at `where`."""
    for part in unquote(pointer).split("/")[1:] if pointer else ():
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            raise ConstraintError(f"JSON schema: $ref {uri!r} points to nothing (at {where})")
    return target


def _join(base: str, ref: str) -> str:
    """`ref` resolved against `base` (RFC 3986; `#...` and absolute URIs of any scheme too)."""
    if ref.startswith("#"):
        return base.split("#")[0] + ref
    if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", ref):
        return ref
    return urljoin(base, ref)

class RefsMixin:
    def resolve(self, uri, where: str):
        if isinstance(uri, str) and uri != "#" and not uri.startswith("#/"):
            return self.resolve_id(uri, where)
        if not isinstance(uri, str):
            raise ConstraintError(f"JSON schema: $ref must be a string at {where}")
        return _follow_pointer(self.root, uri[1:], uri, where)

    def resolve_id(self, uri: str, where: str):
        """A `$ref` by identifier, within the document (as llguidance's resolver): the
        document's own `$id`/`id` (draft 4), a subschema's `$id`/`id` (absolute or relative to
        the one around it), an anchor (`$anchor`, or an `$id`/`id` of the form `#name`), then a
        JSON pointer after the `#`.  Resolved against the document's base URI."""
        if self.ids is None:
            self.ids = {}
            root_id = self.root.get("$id", self.root.get("id")) if isinstance(self.root, dict) else None
            base = _join(_BASE, root_id) if isinstance(root_id, str) else _BASE
            self.base = urldefrag(base)[0]
            stack = [(self.root, self.base)]
            while stack:
                s, base = stack.pop()
                if isinstance(s, list):
                    stack += [(x, base) for x in s]
                    continue
                if not isinstance(s, dict):
                    continue
                for key in ("$id", "id"):
                    v = s.get(key)
                    if isinstance(v, str):
                        full, frag = urldefrag(_join(base, v))
                        if frag:
                            self.ids.setdefault(f"{full}#{frag}", s)
                        else:
                            base = full
                            self.ids.setdefault(full, s)
                        break
                if isinstance(s.get("$anchor"), str):
                    self.ids.setdefault(f"{base}#{s['$anchor']}", s)
                for k, v in s.items():
                    if k not in ("const", "enum", "default", "examples") and isinstance(v, (dict, list)):
                        stack.append((v, base))
        full, frag = urldefrag(_join(self.base, uri))
        target = self.ids.get(full, self.root if full == self.base else None)
        if target is not None and frag and not frag.startswith("/"):
            target = self.ids.get(f"{full}#{frag}")
        if target is None:
            raise UnsupportedFeatureError(f"JSON Schema $ref {uri!r}",
                                          "only references within the document are supported")
        return _follow_pointer(target, frag, uri, where)

    def ref(self, uri, where: str) -> int:
        if not isinstance(uri, str):
            raise ConstraintError(f"JSON schema: $ref must be a string at {where}")
        pointer = unquote(uri[1:]) if uri == "#" or uri.startswith("#/") else uri  # (an identifier as itself)
        hit = self.rules.get(pointer)
        if hit is None:
            target = self.resolve(uri, where)
            name = self.rule_name(pointer or "root")
            hit = self.rules[pointer] = ("rec", name)
            self.pending.append((name, target, uri))
        return hit
