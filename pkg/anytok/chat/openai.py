"""OpenAI chat: a conversation as ChatML ids, and the token count of a Chat Completions request.

`encode` gives the ids gpt-tokenizer 4.0.0's `encodeChat(messages)` gives for a model: for each
message `<|im_start|>` + name-or-role + separator + content + `<|im_end|>` (+ "\\n" for gpt-3.5),
then the reply's prime `<|im_start|>assistant` + separator.  The separator is `<|im_sep|>` for the
gpt-4 family and later, "\\n" for gpt-3.5.  `count_request` gives the count of its
`countChatCompletionTokens(request)`: per message its fields' ordinary token counts plus a fixed
overhead, plus the function definitions rendered as the TypeScript-like namespace OpenAI's models
see them, plus the request's and `function_call`'s overheads.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, Iterable, Mapping, Sequence

from ..core import Encoding
from ..model import encoding_name_for_model
from ..registry import get_encoding
from .images import DETAILS, data_url_bytes, image_cost, image_rule, image_size

# The special tokens gpt-tokenizer gives each chat encoding (tiktoken's o200k_base lacks the ChatML
# ones; OpenAI's server-side format has them).
SPECIAL_IDS: dict[str, dict[str, int]] = {
    "cl100k_base": {
        "<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260, "<|im_start|>": 100264, "<|im_end|>": 100265,
        "<|im_sep|>": 100266, "<|endofprompt|>": 100276,
    },
    "o200k_base": {
        "<|endoftext|>": 199999, "<|fim_prefix|>": 200000, "<|fim_middle|>": 200001,
        "<|fim_suffix|>": 200002, "<|im_start|>": 200003, "<|im_end|>": 200004,
        "<|im_sep|>": 200005, "<|endofprompt|>": 200006,
    },
}

# Overheads of countChatCompletionTokens (gpt-tokenizer's functionCalling.ts, from OpenAI's counts).
MESSAGE_OVERHEAD = 3
NAME_OVERHEAD = 1
FUNCTION_ROLE_DISCOUNT = 2
FUNCTION_CALL_OVERHEAD = 3
FUNCTIONS_OVERHEAD = 9
REQUEST_OVERHEAD = 3
FORCED_FUNCTION_OVERHEAD = 4
FUNCTION_CALL_NONE_OVERHEAD = 1
SYSTEM_WITH_FUNCTIONS_DEDUCTION = 4


class ChatFormat:
    """The ChatML layout of one model: its encoding, special ids and separators."""

    def __init__(self, model: str):
        try:
            name = encoding_name_for_model(model)
        except KeyError:
            raise ValueError(f"unknown chat model {model!r}: anytok.chat knows OpenAI chat models "
                             "on cl100k_base or o200k_base (gpt-4o, gpt-4.1, gpt-4, gpt-3.5-turbo, "
                             "...)") from None
        if name not in SPECIAL_IDS:
            hint = " (gpt-oss uses the harmony format: anytok.chat.harmony_render)" \
                if name == "o200k_harmony" else ""
            raise ValueError(f"model {model!r} uses {name}, which has no ChatML format{hint}")
        self.model = model
        self.encoding: Encoding = get_encoding(name)
        self.special = SPECIAL_IDS[name]
        self.start = self.special["<|im_start|>"]
        self.end = self.special["<|im_end|>"]
        gpt3 = model.startswith(("gpt-3.5", "gpt-35", "ft:gpt-3.5"))
        self.role_sep = self.encoding.encode_ordinary("\n") if gpt3 else [self.special["<|im_sep|>"]]
        self.message_sep = self.encoding.encode_ordinary("\n") if gpt3 else []
        self._special_re = re.compile("|".join(map(re.escape, self.special)))
        self._names: dict[str, list[int]] = {}

    def text_ids(self, text: str, allowed_special: Any = (), what: str = "content") -> list[int]:
        """`text` as ids; special-token text raises unless allowed (as gpt-tokenizer's encode)."""
        if not isinstance(text, str):
            raise TypeError(f"{what} must be a string, got {type(text).__name__}: {text!r:.80}")
        if "<|" not in text:
            return self.encoding.encode_ordinary(text)
        allowed = set(self.special) if allowed_special == "all" else set(allowed_special)
        ids: list[int] = []
        pos = 0
        for m in self._special_re.finditer(text):
            if m.group() not in allowed:
                raise ValueError(
                    f"{what} contains the special token {m.group()!r}; pass allowed_special="
                    f"{{{m.group()!r}}} (or 'all') to encode it as that token")
            ids += self.encoding.encode_ordinary(text[pos:m.start()])
            ids.append(self.special[m.group()])
            pos = m.end()
        ids += self.encoding.encode_ordinary(text[pos:])
        return ids

    def message_ids(self, message: Mapping[str, Any], allowed_special: Any = (),
                    images: Images | None = None) -> list[int]:
        """The message's ids.  A content-part array's text parts are joined; its images have no
        ids: they raise `ValueError` unless `images` (an `Images`) is given, which counts them."""
        if not isinstance(message, Mapping):
            raise TypeError(f"a message must be a dict with 'role' and 'content', got {message!r:.80}")
        if "content" not in message:
            raise ValueError(f"message without 'content': {dict(message)!r:.120}")
        role = message.get("role", "system")
        name = message.get("name", role)
        name_ids = self._names.get(name) if isinstance(name, str) else None
        if name_ids is None:
            name_ids = self._names[name] = self.text_ids(name, (), "name")
        content = message["content"]
        if isinstance(content, list):
            content = content_text(content, images, "content", strict=True)
        return [self.start, *name_ids, *self.role_sep,
                *self.text_ids(content, allowed_special), self.end, *self.message_sep]

    def prime_ids(self, prime: str = "assistant", allowed_special: Any = ()) -> list[int]:
        ids = [self.start, *self.text_ids(prime, allowed_special, "prime")] if prime else []
        return ids + self.role_sep


_FORMATS: dict[str, ChatFormat] = {}


def chat_format(model: str) -> ChatFormat:
    fmt = _FORMATS.get(model)
    if fmt is None:
        fmt = _FORMATS[model] = ChatFormat(model)
    return fmt


def _messages(messages: Any) -> Sequence[Mapping[str, Any]]:
    if isinstance(messages, Mapping) and "messages" in messages:
        messages = messages["messages"]
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Iterable):
        raise TypeError(f"messages must be a list of dicts, got {type(messages).__name__}")
    return list(messages)


def message_ids(messages: Any, model: str = "gpt-4o", *, prime: str = "assistant",
                allowed_special: Any = ()) -> list[list[int]]:
    """Each message's ids, then the reply prime's ids as the last item (their sum is `encode`)."""
    fmt = chat_format(model)
    parts = [fmt.message_ids(m, allowed_special) for m in _messages(messages)]
    parts.append(fmt.prime_ids(prime, allowed_special))
    return parts


def message_counts(messages: Any, model: str = "gpt-4o", *, prime: str = "assistant",
                   allowed_special: Any = (), image_sizes: Any = None,
                   auto_detail: str = "high") -> list[int]:
    """What each message adds (its ids, and the tokens of its images), then the reply prime's."""
    fmt = chat_format(model)
    counts = []
    for m in _messages(messages):
        images = Images(model, image_sizes, auto_detail, strict=True)
        counts.append(len(fmt.message_ids(m, allowed_special, images)) + images.tokens)
    counts.append(len(fmt.prime_ids(prime, allowed_special)))
    return counts


# ---- content-part arrays and images -------------------------------------------------------------

TEXT_PARTS = ("text", "input_text", "output_text")  # Chat Completions; the Responses API's
IMAGE_PARTS = ("image_url", "input_image")


class Images:
    """The images of one request (or message) for `model`: each image part's size (from a data
    URL's header, or `sizes[url or file_id]`, a mapping or a function giving (width, height)),
    its tokens by `images.image_cost`; what cannot be counted is kept in `uncounted` as
    (where, why), or raises `ValueError` when `strict`."""

    def __init__(self, model: str, sizes: Any = None, auto_detail: str = "high", strict: bool = False):
        if auto_detail not in ("low", "high"):
            raise ValueError(f"auto_detail must be 'low' or 'high', got {auto_detail!r}")
        self.model, self.sizes, self.auto_detail, self.strict = model, sizes, auto_detail, strict
        self.counted: list[tuple[str, int]] = []  # (description, tokens)
        self.uncounted: list[tuple[str, str]] = []

    @property
    def tokens(self) -> int:
        return sum(n for _, n in self.counted)

    def skip(self, where: str, why: str) -> None:
        if self.strict:
            raise ValueError(f"{where}: {why}; not counted (chat.request_report counts the rest "
                             "and lists what it leaves out)")
        self.uncounted.append((where, why))

    def _size(self, key: str) -> tuple[int, int] | None:
        if self.sizes is not None:
            got = self.sizes(key) if callable(self.sizes) else self.sizes.get(key)
            if got is not None:
                w, h = got
                return int(w), int(h)
        if key.startswith("data:"):
            _, w, h = image_size(data_url_bytes(key))
            return w, h
        return None

    def add(self, part: Mapping[str, Any], where: str) -> None:
        kind = part.get("type")
        if kind == "image_url":
            ref = part.get("image_url")
            detail = part.get("detail", "auto")
            if isinstance(ref, Mapping):
                ref, detail = ref.get("url"), ref.get("detail", "auto")
        else:  # input_image (Responses API): image_url or file_id, detail beside them
            ref = part.get("image_url") or part.get("file_id")
            detail = part.get("detail", "auto")
        if detail is None:
            detail = "auto"
        if not isinstance(ref, str) or not ref:
            raise ValueError(f"{where}: an {kind} part without its image (url or file_id): {dict(part)!r:.120}")
        if detail not in DETAILS:
            raise ValueError(f"{where}: detail must be one of {', '.join(DETAILS)}, got {detail!r}")
        shown = ref if len(ref) <= 60 else ref[:40] + "…" + ref[-12:]
        try:
            image_rule(self.model)
        except ValueError as e:
            self.skip(where, f"an image, and {e}")
            return
        size = self._size(ref)
        if size is None:
            self.skip(where, f"the image {shown!r}: its size is unknown (anytok reads it from a data "
                             "URL; for a URL or file id give image_sizes={url: (width, height)})")
            return
        cost = image_cost(size[0], size[1], self.model, detail, auto_detail=self.auto_detail)
        how = f", auto as {cost['detail']}" if detail == "auto" and cost["kind"] == "tiles" else ""
        self.counted.append((f"image {size[0]}x{size[1]}, detail {detail}{how}", cost["tokens"]))


def content_text(parts: Any, images: Images | None, where: str = "content", strict: bool = True) -> str:
    """The text of a content-part array (its text parts joined, as one string content); its
    image parts go to `images` (without `images` they raise: an image has no ids); any other
    part raises `ValueError` when `strict`, else is noted in `images.uncounted`."""
    texts = []
    for k, part in enumerate(parts):
        at = f"{where}[{k}]"
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in TEXT_PARTS:
            text = part.get("text")
            if not isinstance(text, str):
                raise TypeError(f"{at}: a {kind} part's text must be a string, got {text!r:.60}")
            texts.append(text)
        elif kind in IMAGE_PARTS:
            if images is None:
                raise ValueError(f"{at} is an image, which has no ids: chat.count, "
                                 "chat.message_counts and chat.count_request count its tokens")
            images.add(part, at)
        else:
            why = f"a {kind!r} part" if isinstance(part, Mapping) else \
                f"a {type(part).__name__} where a content part (an object with 'type') belongs"
            if images is None or strict or images.strict:
                raise ValueError(f"{at}: {why} is not counted (countable parts: "
                                 f"{', '.join(TEXT_PARTS + IMAGE_PARTS)})")
            images.skip(at, why + " (countable parts: " + ", ".join(TEXT_PARTS + IMAGE_PARTS) + ")")
    return "".join(texts)


# ---- countChatCompletionTokens ---------------------------------------------------------------

def _js_number(value: float | int) -> str:
    """A number as JavaScript's String(value) writes it (shortest round-trip digits)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    value = float(value) if isinstance(value, int) and abs(value) >= 2**53 else value
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    t = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    k, n = len(digits), len(digits) + t.exponent  # value = 0.digits * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    mant = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mant}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def _js_string(value: Any) -> str:
    """`${value}` in JavaScript, for the JSON values an enum holds."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, (bool, int, float)):
        return _js_number(value)
    if isinstance(value, list):
        return ",".join("" if v is None else _js_string(v) for v in value)
    return "[object Object]"


def _json_stringify(value: Any) -> str:
    """JSON.stringify(value) for JSON values (compact, non-ASCII kept, JS number formatting)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return "null"
        return _js_number(value)
    if isinstance(value, list):
        return "[" + ",".join(_json_stringify(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + _json_stringify(v)
                              for k, v in _js_items(value)) + "}"
    raise TypeError(f"not a JSON value: {value!r:.80}")


_INDEX_KEY = re.compile(r"0|[1-9][0-9]*")


def _js_items(obj: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Object.entries order: array-index keys ascending first, then the others as inserted."""
    items = [(str(k), v) for k, v in obj.items()]
    index = [kv for kv in items if _INDEX_KEY.fullmatch(kv[0]) and int(kv[0]) < 2**32 - 1]
    if not index:
        return items
    index.sort(key=lambda kv: int(kv[0]))
    return index + [kv for kv in items if not (_INDEX_KEY.fullmatch(kv[0]) and int(kv[0]) < 2**32 - 1)]


def _format_properties(obj: Mapping[str, Any], indent: int) -> str:
    props = obj.get("properties")
    if not props:
        return ""
    if not isinstance(props, Mapping):
        raise TypeError(f"'properties' must be an object, got {props!r:.80}")
    required = obj.get("required") or ()
    pad = " " * indent
    lines = []
    for name, param in _js_items(props):
        desc = param.get("description") if isinstance(param, Mapping) else None
        if desc and indent < 2:
            lines.append(f"{pad}// {_js_string(desc)}")
        optional = "" if name in required else "?"
        lines.append(f"{pad}{name}{optional}: {_format_type(param, indent)},")
    return "\n".join(lines)


def _format_type(param: Any, indent: int) -> str:
    if not isinstance(param, Mapping):
        if param is None:
            raise TypeError("a property's schema is null")
        return "any"
    kind = param.get("type")
    enum = param.get("enum")
    if kind == "string":
        if enum is None:
            return "string"
        return " | ".join(_json_stringify(v) for v in _enum_list(enum))
    if kind in ("integer", "number"):
        if enum is None:
            return "number"
        return " | ".join(_js_string(v) for v in _enum_list(enum))
    if kind in ("boolean", "null"):
        return kind
    if kind == "array":
        items = param.get("items")
        return f"{_format_type(items, indent)}[]" if items else "any[]"
    if kind == "object":
        inner = _format_properties(param, indent + 2)
        return "{\n" + inner + "\n" + " " * indent + "}"
    return "any"


def _enum_list(enum: Any) -> list:
    if not isinstance(enum, list):
        raise TypeError(f"'enum' must be a list, got {enum!r:.80}")
    return enum


def format_functions(functions: Sequence[Mapping[str, Any]]) -> str:
    """Function definitions as the `namespace functions { ... }` text the model sees."""
    lines = ["namespace functions {", ""]
    for fn in functions:
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise ValueError(f"a function definition needs a 'name' string: {fn!r:.120}")
        if fn.get("description"):
            lines.append(f"// {_js_string(fn['description'])}")
        params = fn.get("parameters")
        props = params.get("properties") if isinstance(params, Mapping) else None
        if not params or not props:
            lines.append(f"type {fn['name']} = () => any;")
        else:
            lines.append(f"type {fn['name']} = (_: {{")
            body = _format_properties(params, 0)
            if body:
                lines.append(body)
            lines.append("}) => any;")
        lines.append("")
    lines.append("} // namespace functions")
    return "\n".join(lines)


# Request fields that do not change the prompt's tokens (sampling, limits, output options, ids).
_NOT_PROMPT = frozenset((
    "model", "temperature", "top_p", "n", "stream", "stream_options", "stop", "max_tokens",
    "max_completion_tokens", "max_output_tokens", "presence_penalty", "frequency_penalty",
    "logit_bias", "logprobs", "top_logprobs", "user", "seed", "service_tier", "store", "metadata",
    "parallel_tool_calls", "reasoning_effort", "reasoning", "modalities", "prediction", "truncation",
    "include", "background", "prompt_cache_key", "safety_identifier", "verbosity", "audio",
))
# Message fields counted (or ids that are not sent to the model).
_MESSAGE_KEYS = frozenset(("role", "content", "name", "tool_calls", "tool_call_id", "function_call",
                           "type", "id", "status"))


def _tool_functions(request: Mapping[str, Any], skip) -> tuple[list | None, Any]:
    """`functions` / `function_call` of a request, also from its `tools` / `tool_choice`
    (what has no functions-form twin goes to `skip(where, why)`)."""
    functions = request.get("functions")
    call = request.get("function_call")
    tools = request.get("tools")
    if tools:
        if functions:
            raise ValueError("a request with both 'functions' and 'tools' is not a valid request")
        if not isinstance(tools, list):
            raise TypeError(f"tools must be a list, got {tools!r:.80}")
        functions = []
        for k, tool in enumerate(tools):
            if not isinstance(tool, Mapping):
                raise TypeError(f"tools[{k}] must be an object, got {tool!r:.80}")
            if tool.get("type", "function") != "function":
                skip(f"tools[{k}]", f"a tool of type {tool.get('type')!r} (only function tools "
                     "have a known count)")
                continue
            fn = tool.get("function")
            if fn is None and isinstance(tool.get("name"), str):  # the Responses API's flat form
                fn = {key: tool[key] for key in ("name", "description", "parameters") if key in tool}
            if not isinstance(fn, Mapping):
                raise ValueError(f"tools[{k}]: a function tool needs its 'function': {tool!r:.120}")
            functions.append(fn)
    choice = request.get("tool_choice")
    if choice is not None:
        if call is not None:
            raise ValueError("a request with both 'function_call' and 'tool_choice' is not valid")
        if choice in ("auto", "none"):
            call = choice
        elif isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
            call = {"name": choice["function"].get("name")}
        elif isinstance(choice, Mapping) and choice.get("type") == "function" \
                and isinstance(choice.get("name"), str):  # Responses API
            call = {"name": choice["name"]}
        else:
            skip("tool_choice", f"tool_choice {choice!r:.80} has no known token count (countable: "
                 "'auto', 'none', {'type': 'function', 'function': {'name': ...}})")
    return functions, call


def _as_function_message(m: Mapping[str, Any], called: dict[str, Any], where: str, skip) -> Mapping[str, Any]:
    """A message of the tools form as its functions-form twin, which gpt-tokenizer counts: an
    assistant message with one tool call as one with that `function_call`; a "tool" message with
    a `tool_call_id` as a "function" message named for the call it answers (`called` collects
    the ids of the calls seen so far; one without is counted as any role, as gpt-tokenizer
    does).  Several tool calls in one message (parallel calls) have no functions-form twin:
    they go to `skip` (the rest of the message is counted)."""
    calls = m.get("tool_calls")
    if calls:
        if m.get("function_call"):
            raise ValueError("a message with both 'tool_calls' and 'function_call' is not valid")
        if not isinstance(calls, list) or not all(isinstance(c, Mapping) for c in calls):
            raise TypeError(f"tool_calls must be a list of objects, got {calls!r:.80}")
        for k, call in enumerate(calls):
            fn = call.get("function")
            if call.get("type", "function") != "function" or not isinstance(fn, Mapping):
                raise ValueError(f"only tool calls of type 'function' can be counted, got {call!r:.120}")
            if call.get("id") is not None:
                called[call["id"]] = fn.get("name")
        m = {k: v for k, v in m.items() if k != "tool_calls"}
        if len(calls) > 1:
            skip(f"{where}.tool_calls", f"{len(calls)} tool_calls (parallel calls) have no known "
                 "token count (gpt-tokenizer counts functions-form requests, which have one "
                 "function_call a message)")
            return m
        fn = calls[0]["function"]
        m["function_call"] = {"name": fn.get("name"), "arguments": fn.get("arguments")}
        return m
    if m.get("role") == "tool" and m.get("tool_call_id") is not None:
        answered = m["tool_call_id"]
        if answered not in called:
            raise ValueError(f"a 'tool' message answers tool_call_id {answered!r:.60}, which no "
                             "earlier assistant message's tool_calls has: its function's name "
                             "(counted as the functions form's 'function' message) is unknown")
        m = {k: v for k, v in m.items() if k not in ("tool_call_id", "role")}
        return {"role": "function", "name": called[answered], **m}
    return m


def _from_responses(request: Mapping[str, Any], skip) -> dict:
    """A Responses API request (`input`, `instructions`) as the Chat Completions request it
    stands for: instructions as a system message first, a string input as a user message,
    message items as messages, a run of function_call items as one assistant message's
    tool_calls, function_call_output items as tool messages; other items go to `skip`."""
    out = {k: v for k, v in request.items() if k not in ("input", "instructions", "text")}
    messages: list[dict] = []
    origins: list[str] = []  # where each message comes from, for what is reported
    if request.get("instructions"):
        messages.append({"role": "system", "content": request["instructions"]})
        origins.append("instructions")
    items = request.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise TypeError(f"a Responses request's input must be a string or a list, got {items!r:.80}")
    for k, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise TypeError(f"input[{k}] must be an object, got {item!r:.80}")
        kind = item.get("type", "message")
        if kind == "message":
            messages.append({key: v for key, v in item.items() if key not in ("type", "id", "status")})
            origins.append(f"input[{k}]")
        elif kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments")}}
            last = messages[-1] if messages else None
            if last is not None and last.get("_calls"):
                last["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call], "_calls": True})
                origins.append(f"input[{k}]")
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": output})
            origins.append(f"input[{k}]")
        else:
            skip(f"input[{k}]", f"an input item of type {kind!r} has no known token count")
    for m in messages:
        m.pop("_calls", None)
    fmt = (request.get("text") or {}).get("format") if isinstance(request.get("text"), Mapping) else None
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        skip("text.format", "a json_schema output format's schema is given to the model in a form "
             "whose token count is not published")
    out["messages"] = messages
    out["_origins"] = origins
    return out


def request_report(request: Any, model: str = "gpt-4o", *, image_sizes: Any = None,
                   auto_detail: str = "high") -> dict:
    """The tokens of a request's prompt, with what makes them and what is not counted:
    {"model", "tokens", "parts": [{"part": label, "tokens": n}, ...] (summing to tokens),
    "not_counted": [{"where": "messages[2].content[1]", "why": ...}, ...]}.

    `request` is a Chat Completions request (or a messages list), or a Responses API one
    (`input`, `instructions`), counted as the Chat Completions request it stands for.  Text is
    counted as gpt-tokenizer's countChatCompletionTokens counts it (a content-part array's
    text parts as one string); each image by OpenAI's rule for `model` (`images.image_cost`;
    its size read from a data URL, or `image_sizes[url or file_id]` — a mapping or a function
    giving (width, height)), as a part of its own after its message; detail "auto" as
    `auto_detail`.  What has no known count (parallel tool calls, non-function tools,
    tool_choice "required", audio or file parts, an image of unknown size, a json_schema
    output format, unknown fields...) is left out of `tokens` and listed in `not_counted`."""
    uncounted: list[tuple[str, str]] = []

    def skip(where: str, why: str) -> None:
        uncounted.append((where, why))

    origins: list[str] = []
    if not isinstance(request, Mapping):
        request = {"messages": _messages(request)}
    elif "input" in request and "messages" not in request:
        request = _from_responses(request, skip)
        origins = request.pop("_origins")
    elif "messages" not in request:
        raise ValueError("a request needs 'messages' (Chat Completions) or 'input' (Responses API)")
    enc = chat_format(model).encoding
    counts: dict[str, int] = {}

    def n(text: Any, what: str) -> int:
        if not text:
            return 0
        if not isinstance(text, str):
            raise TypeError(f"{what} must be a string to be counted, got {type(text).__name__}: "
                            f"{text!r:.80}")
        c = counts.get(text)
        if c is None:
            c = counts[text] = enc.count_ordinary(text)
        return c

    for key in request:
        if key in ("messages", "functions", "function_call", "tools", "tool_choice") or key in _NOT_PROMPT:
            continue
        if key == "response_format":
            if isinstance(request[key], Mapping) and request[key].get("type") == "json_schema":
                skip(key, "a json_schema response format's schema is given to the model in a form "
                     "whose token count is not published")
            continue
        skip(key, f"the request field {key!r} is not known to anytok's count")
    messages = _messages(request.get("messages", ()))
    functions, call = _tool_functions(request, skip)
    has_functions = bool(functions)
    padded = False
    parts: list[tuple[str, int]] = []
    called: dict[str, Any] = {}  # tool call id -> the function's name
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise TypeError(f"a message must be a dict, got {m!r:.80}")
        where = origins[i] if i < len(origins) else f"messages[{i}]"
        label = f"message {i + 1} ({m.get('role')})"
        for key in m:
            if key not in _MESSAGE_KEYS:
                if key == "refusal" and not m[key]:
                    continue
                skip(f"{where}.{key}", f"the message field {key!r} is not known to anytok's count")
        m = _as_function_message(m, called, where, skip)
        content = m.get("content")
        images = Images(model, image_sizes, auto_detail)
        if isinstance(content, list):
            content = content_text(content, images, f"{where}.content", strict=False)
        uncounted += images.uncounted
        role = m.get("role")
        if role == "system" and has_functions and not padded:
            padded = True
            if content and isinstance(content, str) and not content.endswith("\n"):
                content += "\n"
        total = n(role, "role") + n(content, "content")
        if m.get("name"):
            total += n(m["name"], "name") + NAME_OVERHEAD
        fc = m.get("function_call")
        if fc:
            if not isinstance(fc, Mapping):
                raise TypeError(f"function_call must be an object, got {fc!r:.80}")
            total += n(fc.get("name"), "function_call.name") \
                + n(fc.get("arguments"), "function_call.arguments") + FUNCTION_CALL_OVERHEAD
        total += MESSAGE_OVERHEAD
        if role == "function":
            total -= FUNCTION_ROLE_DISCOUNT
        parts.append((label, total))
        parts += [(f"{label}: {what}", tokens) for what, tokens in images.counted]
    parts.append(("reply priming", REQUEST_OVERHEAD))
    if has_functions:
        total = n(format_functions(functions), "functions") + FUNCTIONS_OVERHEAD
        if any(isinstance(m, Mapping) and m.get("role") == "system" for m in messages):
            total -= SYSTEM_WITH_FUNCTIONS_DEDUCTION
        parts.append((f"functions ({len(functions)})", total))
    if call and call != "auto":
        if call == "none":
            parts.append(("function_call none", FUNCTION_CALL_NONE_OVERHEAD))
        elif isinstance(call, Mapping) and call.get("name"):
            parts.append(("function_call name", n(call["name"], "function_call.name")
                          + FORCED_FUNCTION_OVERHEAD))
    return {"model": model, "tokens": sum(t for _, t in parts),
            "parts": [{"part": p, "tokens": t} for p, t in parts],
            "not_counted": [{"where": w, "why": y} for w, y in uncounted]}


class NotCountedError(ValueError):
    """Raised by `count_request` / `request_parts` when part of a request has no known count;
    `report` is `request_report`'s answer (the rest counted, and what was left out)."""

    def __init__(self, report: dict):
        self.report = report
        left = report["not_counted"]
        listed = "; ".join(f"{x['where']}: {x['why']}" for x in left[:3])
        more = f"; and {len(left) - 3} more" if len(left) > 3 else ""
        super().__init__(f"{len(left)} part{'s' if len(left) > 1 else ''} of the request "
                         f"cannot be counted ({listed}{more}); chat.request_report counts the "
                         f"rest ({report['tokens']} tokens) and lists them")


def count_request(request: Any, model: str = "gpt-4o", **kwargs: Any) -> int:
    """Tokens of a request's prompt, as gpt-tokenizer's countChatCompletionTokens counts its
    text, with images by OpenAI's rules (see `request_report`, which takes the same keywords).
    Raises `NotCountedError` (a `ValueError`) when part of it has no known count."""
    return sum(n for _, n in request_parts(request, model, **kwargs))


def request_parts(request: Any, model: str = "gpt-4o", **kwargs: Any) -> list[tuple[str, int]]:
    """`count_request` as (label, tokens) parts: one per message (then one per image of it),
    then the request's overheads (the functions' part includes their deduction when a system
    message is present).  Raises `NotCountedError` as `count_request` does."""
    report = request_report(request, model, **kwargs)
    if report["not_counted"]:
        raise NotCountedError(report)
    return [(p["part"], p["tokens"]) for p in report["parts"]]
