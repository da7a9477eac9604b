"""Harmony (gpt-oss, o200k_harmony): a conversation in openai-harmony's JSON form -> ids.

Flow, as openai-harmony 0.0.8 renders: the conversation's messages (after dropping analysis
messages before the first final one when the last assistant message is final) each become
`<|start|>` header `<|message|>` contents `<|end|>` (or `<|call|>` for an assistant message to a
recipient).  The header is the role (or a tool's name), `:name`, ` to=recipient`,
`<|channel|>channel` and the content type (`<|constrain|>` as its token); every piece of text is
encoded on its own with o200k_harmony's ordinary encoder.  System and developer contents are
rendered to text first: identity and dates, reasoning effort, tool namespaces (JSON Schemas as
TypeScript-like types), valid channels.  For completion `<|start|>` + the next role follow.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from ..registry import get_encoding

START, MESSAGE, END, CALL, CHANNEL, CONSTRAIN, RETURN = (200006, 200008, 200007, 200012, 200005,
                                                         200003, 200002)
ROLES = ("user", "assistant", "system", "developer", "tool")
DEFAULT_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
DEFAULT_CHANNELS = {"valid_channels": ["analysis", "commentary", "final"], "channel_required": True}


class HarmonyError(ValueError):
    """A conversation openai-harmony would refuse."""


def _lines(text: str) -> list[str]:
    """Rust's str::lines: split at \\n, a trailing \\r dropped, no last empty line."""
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def _json(value: Any) -> str:
    """serde_json's compact Display of a JSON value."""
    if isinstance(value, float) and not isinstance(value, bool):
        if not math.isfinite(value):
            return "null"
        r = repr(value)
        if "e" in r:
            mant, exp = r.split("e")
            return f"{mant}e{int(exp)}"
        return r
    if isinstance(value, list):
        return "[" + ",".join(_json(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + _json(v)
                              for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


def _get(schema: Any, key: str) -> Any:
    return schema.get(key) if isinstance(schema, Mapping) else None


def _property_default_text(schema: Mapping) -> str:
    """A property's `default: ...` comment (a string quoted unless an enum's, then bare)."""
    dv = schema["default"]
    if isinstance(dv, str):
        return f"default: {dv}" if _is_enum(schema) else f'default: "{dv}"'
    return f"default: {_json(dv)}"


def _is_enum(schema: Any) -> bool:
    e = _get(schema, "enum")
    return isinstance(e, list) and len(e) > 0


def _default_text(schema: Any, default: Any) -> str:
    if isinstance(default, str) and not _is_enum(schema):
        return f'default: "{default}"'
    return f"default: {_json(default)}"


def _nullable(schema: Any, type_str: str) -> str:
    if _get(schema, "nullable") is True and "null" not in type_str:
        return f"{type_str} | null"
    return type_str


def schema_to_typescript(schema: Any, indent: str = "") -> str:
    """A JSON Schema as the TypeScript-like type harmony shows the model."""
    one_of = _get(schema, "oneOf")
    if isinstance(one_of, list):
        out = []
        for variant in one_of:
            out.append(f"\n{indent} | ")
            out.append(_nullable(variant, schema_to_typescript(variant, indent + "   ")))
            comments = []
            desc = _get(variant, "description")
            if isinstance(desc, str):
                comments.append(desc)
            if isinstance(variant, Mapping) and "default" in variant:
                comments.append(_default_text(variant, variant["default"]))
            if comments:
                out.append(" // " + " ".join(comments))
        return "".join(out)
    kind = _get(schema, "type")
    if isinstance(kind, list):
        names = ["number" if t == "integer" else t for t in kind if isinstance(t, str)]
        if names:
            return " | ".join(names)
    if not isinstance(kind, str):
        return "any"
    if kind == "object":
        return _object(schema, indent)
    if kind == "string":
        enum = _get(schema, "enum")
        if isinstance(enum, list):
            values = [f'"{v}"' for v in enum if isinstance(v, str)]
            if values:
                return " | ".join(values)
        return "string"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        if isinstance(schema, Mapping) and "items" in schema:
            return schema_to_typescript(schema["items"], indent) + "[]"
        return "Array<any>"
    return "any"


def _object(schema: Mapping, indent: str) -> str:
    out = []
    desc = schema.get("description")
    if isinstance(desc, str):
        out.append(f"{indent}// {desc}\n")
    out.append("{\n")
    props = schema.get("properties")
    if isinstance(props, Mapping):
        req = schema.get("required")
        required = {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()
        for key, val in props.items():
            opt = "" if key in required else "?"
            title = _get(val, "title")
            if isinstance(title, str):
                out.append(f"{indent}// {title}\n{indent}//\n")
            one_of = _get(val, "oneOf")
            d = _get(val, "description")
            if one_of is None and isinstance(d, str):
                out.append(f"{indent}// {d}\n")
            examples = _get(val, "examples")
            if isinstance(examples, list) and examples:
                out.append(f"{indent}// Examples:\n")
                for ex in examples:
                    if isinstance(ex, str):
                        out.append(f'{indent}// - "{ex}"\n')
            if isinstance(one_of, list):
                prop_desc = d if isinstance(d, str) else None
                skip = bool(prop_desc is not None and one_of
                            and _get(one_of[0], "description") == prop_desc
                            and isinstance(_get(one_of[0], "description"), str))
                above = False
                if not skip and prop_desc is not None:
                    out.append(f"{indent}// {prop_desc}\n")
                    above = True
                if "default" in val:
                    out.append(f"{indent}// {_property_default_text(val)}\n")
                out.append(f"{indent}{key}{opt}:\n")
                for i, variant in enumerate(one_of):
                    out.append(f"{indent} | ")
                    out.append(_nullable(variant, schema_to_typescript(variant, indent + "   ")))
                    comments = []
                    vd = _get(variant, "description")
                    if not (i == 0 and above) and isinstance(vd, str) and vd != prop_desc:
                        comments.append(vd)
                    if isinstance(variant, Mapping) and "default" in variant:
                        comments.append(_property_default_text(variant))
                    if comments:
                        out.append(" // " + " ".join(comments))
                    out.append("\n")
                out.append(f"{indent},\n")
                continue
            out.append(f"{indent}{key}{opt}: ")
            out.append(_nullable(val, schema_to_typescript(val, indent + "    ")))
            out.append(",")
            if one_of is None and isinstance(val, Mapping) and "default" in val:
                dv = val["default"]
                if isinstance(dv, str) and not _is_enum(val):
                    out.append(f' // default: "{dv}"')
                elif isinstance(dv, str):
                    out.append(f" // default: {dv}")
                else:
                    out.append(f" // default: {_json(dv)}")
            out.append("\n")
    out.append(f"{indent}}}")
    return "".join(out)


def _tools_section(tools: Mapping[str, Any]) -> str:
    sections = ["# Tools"]
    for key in sorted(tools):
        ns = tools[key]
        if not isinstance(ns, Mapping) or not isinstance(ns.get("name"), str):
            raise HarmonyError(f"tool namespace {key!r} needs a 'name'")
        name, fns = ns["name"], ns.get("tools") or []
        part = [f"## {name}\n"]
        if ns.get("description") is not None:
            for line in _lines(ns["description"]):
                part.append(f"// {line}" if fns else line)
        if fns:
            part.append(f"namespace {name} {{\n")
            for tool in fns:
                for line in _lines(tool.get("description", "")):
                    part.append(f"// {line}")
                if tool.get("parameters") is not None:
                    part.append(f"type {tool['name']} = (_: {schema_to_typescript(tool['parameters'])}) => any;\n")
                else:
                    part.append(f"type {tool['name']} = () => any;\n")
            part.append(f"}} // namespace {name}")
        sections.append("\n".join(part))
    return "\n\n".join(sections)


def _system_text(c: Mapping[str, Any], has_function_tools: bool) -> str:
    def field(key, default):
        return c[key] if key in c else default

    sections = []
    top = []
    identity = field("model_identity", DEFAULT_IDENTITY)
    if identity is not None:
        top.append(identity)
    cutoff = field("knowledge_cutoff", "2024-06")
    if cutoff is not None:
        top.append(f"Knowledge cutoff: {cutoff}")
    if c.get("conversation_start_date") is not None:
        top.append(f"Current date: {c['conversation_start_date']}")
    if top:
        sections.append("\n".join(top))
    effort = field("reasoning_effort", "Medium")
    if effort is not None:
        if str(effort).lower() not in ("low", "medium", "high"):
            raise HarmonyError(f"reasoning_effort must be Low, Medium or High, got {effort!r}")
        sections.append(f"Reasoning: {str(effort).lower()}")
    if c.get("tools"):
        sections.append(_tools_section(c["tools"]))
    channels = field("channel_config", DEFAULT_CHANNELS)
    if channels is not None and channels.get("valid_channels"):
        header = f"# Valid channels: {', '.join(channels['valid_channels'])}."
        if channels.get("channel_required"):
            header += " Channel must be included for every message."
        if has_function_tools:
            header += "\nCalls to these tools must go to the commentary channel: 'functions'."
        sections.append(header)
    return "\n\n".join(sections)


def _developer_text(c: Mapping[str, Any]) -> str:
    sections = []
    if c.get("instructions") is not None:
        sections += ["# Instructions", c["instructions"]]
    if c.get("tools"):
        sections.append(_tools_section(c["tools"]))
    return "\n\n".join(sections)


def _contents(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    raw = message.get("content", [])
    if isinstance(raw, str):
        return [{"type": "text", "text": raw}]
    if not isinstance(raw, list):
        raise HarmonyError(f"a message's content must be a string or a list, got {raw!r:.80}")
    for c in raw:
        if not isinstance(c, Mapping) or c.get("type") not in ("text", "system_content", "developer_content"):
            raise HarmonyError(f"unknown content variant: {c!r:.120}")
    return raw


class _Renderer:
    def __init__(self):
        self.enc = get_encoding("o200k_harmony")
        self.cache: dict[str, list[int]] = {}

    def text(self, s: str) -> list[int]:
        ids = self.cache.get(s)
        if ids is None:
            ids = self.enc.encode_ordinary(s)
            if len(s) < 200:
                self.cache[s] = ids
        return ids

    def message(self, m: Mapping[str, Any], has_function_tools: bool) -> list[int]:
        role = m.get("role")
        if role not in ROLES:
            raise HarmonyError(f"Unknown role: {role!r}")
        name = m.get("name")
        ids = [START]
        if role == "tool":
            if name is None:
                raise HarmonyError("Tools should have a name!")
            ids += self.text(name)
        else:
            ids += self.text(role)
            if name is not None:
                ids += self.text(f":{name}")
        recipient = m.get("recipient")
        if recipient is not None and recipient != "all":
            ids += self.text(f" to={recipient}")
        if m.get("channel") is not None:
            ids.append(CHANNEL)
            ids += self.text(m["channel"])
        ct = m.get("content_type")
        if ct is not None:
            if ct.startswith("<|constrain|>"):
                ids += self.text(" ")
                ids.append(CONSTRAIN)
                if ct[len("<|constrain|>"):]:
                    ids += self.text(ct[len("<|constrain|>"):])
            else:
                ids += self.text(f" {ct}")
        ids.append(MESSAGE)
        for c in _contents(m):
            kind = c["type"]
            if kind == "text":
                ids += self.enc.encode_ordinary(c.get("text", ""))
            elif kind == "system_content":
                if role != "system":
                    raise HarmonyError(f"SystemContent may only appear in system messages, found in {role}")
                ids += self.enc.encode_ordinary(_system_text(c, has_function_tools))
            else:
                if role != "developer":
                    raise HarmonyError(f"DeveloperContent may only appear in developer messages, found in {role}")
                ids += self.enc.encode_ordinary(_developer_text(c))
        ids.append(CALL if role == "assistant" and recipient is not None else END)
        return ids


_RENDERER: list[_Renderer] = []


def _renderer() -> _Renderer:
    if not _RENDERER:
        _RENDERER.append(_Renderer())
    return _RENDERER[0]


def _message_list(conversation: Any) -> list[Mapping[str, Any]]:
    if isinstance(conversation, str):
        conversation = json.loads(conversation)
    if isinstance(conversation, Mapping):
        conversation = conversation.get("messages")
    if not isinstance(conversation, list) or not all(isinstance(m, Mapping) for m in conversation):
        raise HarmonyError("a harmony conversation is {'messages': [message dicts]} (openai-harmony's JSON form)")
    return conversation


def render_parts(conversation: Any, for_completion: bool = True, next_role: str = "assistant",
                 auto_drop_analysis: bool = True) -> list[list[int]]:
    """The ids of each rendered message (dropped ones are left out), then the completion prime."""
    messages = _message_list(conversation)
    r = _renderer()
    has_fn = any(c.get("type") == "developer_content" and isinstance(c.get("tools"), Mapping)
                 and isinstance(c["tools"].get("functions"), Mapping)
                 and c["tools"]["functions"].get("tools")
                 for m in messages for c in _contents(m))
    last_final = next((m.get("channel") == "final" for m in reversed(messages)
                       if m.get("role") == "assistant"), False)
    drop = auto_drop_analysis and last_final
    first_final = next((i for i, m in enumerate(messages) if m.get("channel") == "final"), None)
    parts = []
    for i, m in enumerate(messages):
        if drop and first_final is not None and i < first_final and m.get("channel") == "analysis":
            continue
        parts.append(r.message(m, bool(has_fn)))
    if for_completion:
        if next_role not in ROLES:
            raise HarmonyError(f"Unknown role: {next_role!r}")
        parts.append([START, *r.text(next_role)])
    return parts


def render(conversation: Any, for_completion: bool = True, next_role: str = "assistant",
           auto_drop_analysis: bool = True) -> list[int]:
    return [i for p in render_parts(conversation, for_completion, next_role, auto_drop_analysis) for i in p]


# ---- parsing completion ids back into messages ------------------------------------------------

STOP = (RETURN, CALL, END)
_ASCII_WS = " \t\n\x0c\r"


def _rust_ws(c: str) -> bool:
    return c.isspace() and c not in "\x1c\x1d\x1e\x1f"


def _parse_header(text: str, role: str | None) -> dict:
    channel = None
    at = text.find("<|channel|>")
    if at >= 0:
        after = text[at + len("<|channel|>"):]
        end = next((i for i, c in enumerate(after) if _rust_ws(c) or c == "<"), len(after))
        if end == 0:
            raise HarmonyError("channel marker present but no channel value found in header")
        channel = after[:end]
        text = text[:at] + after[end:]
    text = text.strip()  # Rust's trim: Unicode whitespace
    while text and _rust_ws(text[0]):
        text = text[1:]
    while text and _rust_ws(text[-1]):
        text = text[:-1]
    if "<|constrain|>" in text:
        text = text.replace("<|constrain|>", " <|constrain|>")
        while text and _rust_ws(text[0]):
            text = text[1:]
        while text and _rust_ws(text[-1]):
            text = text[:-1]
    parts = [p for p in _split_ascii_ws(text) if p]
    role_str = None
    if role is None:
        if not parts:
            raise HarmonyError("message header did not contain a role")
        role_str = parts[0]
        if role_str in ROLES:
            role = role_str
        elif len(parts) > 1 or parts[0].startswith("to="):
            parts.pop(0)
            role = "tool"
        else:
            raise HarmonyError(f"Unknown role: {role_str}")
    if parts and parts[0] == role:
        parts.pop(0)
    recipient = content_type = None
    if parts:
        n = len(parts)
        last = parts.pop()
        if last.startswith("to="):
            recipient = last[3:]
        elif n == 1:
            recipient = last
        else:
            content_type = last
            if parts:
                raw = parts.pop()
                recipient = raw[3:] if raw.startswith("to=") else raw
        if parts:
            raise HarmonyError(f"unexpected tokens remaining in message header: {' '.join(parts)!r}")
    m: dict = {"role": role, "name": role_str if role == "tool" else None}
    return {"header": m, "channel": channel, "recipient": recipient, "content_type": content_type}


def _split_ascii_ws(text: str) -> list[str]:
    out, cur = [], []
    for c in text:
        if c in _ASCII_WS:
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(c)
    if cur:
        out.append("".join(cur))
    return out


def parse(ids: Any, role: str | None = None) -> list[dict]:
    """Messages of completion ids, as openai-harmony's parse_messages_from_completion_tokens
    (strict) gives them, in its to_dict form ({"role", "name", "content": [{"type": "text",
    "text"}], "channel"?, "recipient"?, "content_type"?}).  `role`: the role of the first message
    when the ids start after its `<|start|>` (e.g. "assistant")."""
    if role is not None and role not in ROLES:
        raise HarmonyError(f"Unknown role: {role!r}")
    enc = _renderer().enc
    messages: list[dict] = []
    state = "header" if role is not None else "start"
    header: list[int] = []
    content: list[int] = []
    parsed: dict = {}

    def decode(tokens: list[int], what: str) -> str:
        try:
            data = enc.decode_bytes(tokens)
        except (KeyError, ValueError, IndexError):
            raise HarmonyError(f"{what}: not ids of o200k_harmony: {tokens!r:.80}") from None
        return data.decode("utf-8", "replace")

    def finish() -> None:
        m = dict(parsed["header"])
        m["content"] = [{"type": "text", "text": decode(content, "content")}]
        for key in ("channel", "recipient", "content_type"):
            if parsed[key] is not None:
                m[key] = parsed[key]
        messages.append(m)

    for t in ids:
        if state == "start":
            if t != START:
                raise HarmonyError(f"Unexpected token {t} while expecting start token {START}")
            state, header = "header", []
        elif state == "header":
            if t == MESSAGE:
                try:
                    text = enc.decode_bytes(header).decode("utf-8")
                except UnicodeDecodeError:
                    raise HarmonyError("could not decode header") from None
                parsed = _parse_header(text, role)
                role = None
                state, content = "content", []
            else:
                header.append(t)
        else:
            if t in STOP:
                finish()
                state = "start"
            else:
                content.append(t)
    if state == "header":
        raise HarmonyError("Unexpected EOS while waiting for message header to complete")
    if state == "content":
        finish()
    return messages
