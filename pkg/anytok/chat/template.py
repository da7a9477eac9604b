"""Hugging Face chat templates: `apply_chat_template` as transformers 5.23.0 runs it.

Flow: tokenizer_config.json -> `ChatTemplates` (the Jinja source(s), the named special tokens as
strings) -> on a call, the messages are copied as plain JSON data (keys whose value is None
dropped, reasoning aliased under `reasoning_content` / `thinking`, the message to continue tagged)
-> jinja2's `ImmutableSandboxedEnvironment` (trim_blocks, lstrip_blocks, loopcontrols; `tojson`,
`raise_exception`, `strftime_now`, `dict`, `namespace` as transformers defines them) renders the
template with messages / tools / documents / add_generation_prompt / the special tokens / the
caller's kwargs -> text (cut after the continued message) -> the tokenizer's ids with no special
tokens added (the template writes them).

jinja2 is imported here only, when a template is first compiled (the extra `anytok[chat]`).
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import Any, Mapping

SPECIAL_TOKEN_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token",
                       "cls_token", "mask_token")
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


class ChatTemplateError(ValueError):
    """A chat template could not be applied (its own `raise_exception` message, or bad input)."""


def _token_text(value: Any) -> str | None:
    if isinstance(value, Mapping):
        value = value.get("content")
    return None if value is None else str(value)


class ChatTemplates:
    """The chat template(s) and named special tokens of a tokenizer_config.json."""

    def __init__(self, config: Mapping[str, Any], what: str = "tokenizer_config.json"):
        self.what = what
        tpl = config.get("chat_template")
        if isinstance(tpl, list):  # [{"name": ..., "template": ...}, ...]
            tpl = {t["name"]: t["template"] for t in tpl}
        self.template: str | dict[str, str] | None = tpl
        self.special_tokens = {k: t for k in SPECIAL_TOKEN_NAMES
                               if (t := _token_text(config.get(k))) is not None}

    @classmethod
    def from_file(cls, path: str | os.PathLike, folder: str | os.PathLike | None = None) -> "ChatTemplates":
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                config = json.load(f)
        except ValueError as e:
            raise ChatTemplateError(f"{path}: not valid JSON ({e})") from None
        if not isinstance(config, dict):
            raise ChatTemplateError(f"{path}: not a tokenizer_config.json (a JSON object)")
        # transformers also reads a chat_template.jinja (or .json) beside the config
        base = os.path.dirname(path) if folder is None else os.fspath(folder)
        jinja = os.path.join(base, "chat_template.jinja")
        if "chat_template" not in config and os.path.isfile(jinja):
            with open(jinja, encoding="utf-8") as f:
                config = {**config, "chat_template": f.read()}
        return cls(config, path)

    @classmethod
    def lazy(cls, path: str | os.PathLike) -> "ChatTemplates":
        """`from_file(path)`, or one whose use raises the reason it could not be read."""
        try:
            return cls.from_file(path)
        except (ChatTemplateError, OSError, UnicodeDecodeError) as e:
            broken = cls({}, os.fspath(path))
            broken.error = f"{os.fspath(path)}: {e}" if not str(e).startswith(os.fspath(path)) else str(e)
            return broken

    error: str | None = None

    def select(self, chat_template: str | None, tools: Any) -> str:
        if self.error is not None:
            raise ChatTemplateError(self.error)
        t = self.template
        if isinstance(t, dict):
            if chat_template is not None and chat_template in t:
                return t[chat_template]
            if chat_template is None:
                if tools is not None and "tool_use" in t:
                    return t["tool_use"]
                if "default" in t:
                    return t["default"]
                raise ChatTemplateError(f"{self.what} has several chat templates and none named "
                                        f"'default': pass chat_template= one of {sorted(t)}")
        if chat_template is not None:
            return chat_template
        if t is None:
            raise ChatTemplateError(f"{self.what} has no chat_template; pass chat_template=")
        return t


def _plain(value: Any) -> Any:
    """JSON-like data only (what transformers lets a template see)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return f"<{type(value).__name__}>"


_COMPILED: dict[str, Any] = {}


def _compile(source: str):
    tpl = _COMPILED.get(source)
    if tpl is not None:
        return tpl
    try:
        import jinja2
        import jinja2.ext
        import jinja2.utils
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        raise ImportError("chat templates need jinja2: pip install 'anytok[chat]'") from None

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.now().strftime(format)

    class _Dict:
        def __call__(self, *args, **kwargs):
            return dict(*args, **kwargs)

        def fromkeys(self, *args, **kwargs):
            return dict.fromkeys(*args, **kwargs)

    class _Namespace(jinja2.utils.Namespace):
        def __init__(*args, **kwargs):
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                _Namespace._check(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name, value):
            _Namespace._check(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check(name):
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(
                    f"a chat template cannot set the underscore attribute {name!r} on a namespace")

    class _Generation(jinja2.ext.Extension):
        """`{% generation %}...{% endgeneration %}` renders its body (assistant-mask marker)."""
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller):
            return caller()

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[_Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = _Dict()
    env.globals["namespace"] = _Namespace
    try:
        tpl = env.from_string(source)
    except jinja2.exceptions.TemplateSyntaxError as e:
        raise ChatTemplateError(f"the chat template does not compile: {e} (line {e.lineno})") from None
    _COMPILED[source] = tpl
    return tpl


def render(templates: ChatTemplates, messages: Any, tools: Any = None, documents: Any = None,
           add_generation_prompt: bool = False, continue_final_message: bool | str = False,
           chat_template: str | None = None, **kwargs: Any) -> str:
    """The prompt text transformers' `apply_chat_template(..., tokenize=False)` gives."""
    source = templates.select(chat_template, tools)
    if isinstance(messages, Mapping) and "messages" in messages:
        messages = messages["messages"]
    if not isinstance(messages, (list, tuple)) or not messages:
        raise ChatTemplateError("apply_chat_template needs a non-empty list of messages")
    for m in messages:
        if not isinstance(m, Mapping):
            raise ChatTemplateError(f"a message must be a dict, got {m!r:.80}")
    if continue_final_message and add_generation_prompt:
        raise ChatTemplateError("continue_final_message and add_generation_prompt cannot both be set")
    if tools is not None:
        for tool in tools:
            if not isinstance(tool, Mapping):
                raise ChatTemplateError(f"a tool must be a JSON schema (a dict), got {tool!r:.80}")
    if documents is not None:
        for doc in documents:
            if not isinstance(doc, Mapping):
                raise ChatTemplateError("documents must be dicts with 'title' and 'text' keys")
    chat = [_plain({k: v for k, v in m.items() if v is not None}) for m in messages]
    aliased = []
    for m in chat:
        r = next((m[k] for k in REASONING_FIELDS if m.get(k) is not None), None)
        aliased.append(m if r is None else {"thinking": r, **m, "reasoning_content": r})
    chat = aliased
    final = None
    if continue_final_message:
        field = continue_final_message if isinstance(continue_final_message, str) else "content"
        final = chat[-1].get(field)
        if final is None:
            raise ChatTemplateError(f"continue_final_message: the final message has no {field!r}")
        fields = [field]
        if field in REASONING_FIELDS:
            fields = [f for f in REASONING_FIELDS if chat[-1].get(f) == final]
        if not any(f in source for f in fields):
            raise ChatTemplateError(f"continue_final_message: the template does not use {field!r}")
        if isinstance(final, (list, tuple)):
            for block in reversed(final):
                if "text" in block:
                    final = block["text"]
                    block["text"] = block["text"] + CONTINUE_TAG
                    break
            else:
                raise ChatTemplateError("continue_final_message: no text in the final message")
        else:
            for f in fields:
                chat[-1][f] = chat[-1][f] + CONTINUE_TAG
    variables = {**templates.special_tokens, **_plain(kwargs)}
    import jinja2

    try:
        text = _compile(source).render(messages=chat, tools=_plain(tools), documents=_plain(documents),
                                       add_generation_prompt=add_generation_prompt, **variables)
    except jinja2.exceptions.TemplateError as e:
        raise ChatTemplateError(str(e)) from None
    if continue_final_message:
        if final.strip() not in text or CONTINUE_TAG.strip() not in text:
            raise ChatTemplateError("continue_final_message: the rendered chat does not hold the "
                                    "final message (the template changed it)")
        at = text.rindex(CONTINUE_TAG.strip())
        text = text[:at] if text[at:at + len(CONTINUE_TAG)] == CONTINUE_TAG else text[:at].rstrip()
    return text


def apply_chat_template(tok: Any, templates: ChatTemplates | None, messages: Any, tools: Any = None,
                        documents: Any = None, add_generation_prompt: bool = False,
                        continue_final_message: bool | str = False, tokenize: bool = True,
                        **template_kwargs: Any) -> str | list[int]:
    if templates is None:
        raise ChatTemplateError(
            "this tokenizer has no chat template: load it with its tokenizer_config.json "
            "(anytok.load(folder) or anytok.load('tokenizer.json', config='tokenizer_config.json'))")
    text = render(templates, messages, tools, documents, add_generation_prompt,
                  continue_final_message, **template_kwargs)
    if not tokenize:
        return text
    return tok.encode(text)
