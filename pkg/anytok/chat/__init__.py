"""Chat: count and encode conversations as the model sees them.

Three kinds of conversation, one flow each; all end in the ids of an anytok encoding, so the same
code runs natively and under Pyodide:

* OpenAI chat (`openai.py`): messages (dicts with role / content / name) -> ChatML ids per message
  (`<|im_start|>` name-or-role separator content `<|im_end|>`) -> the reply prime -> ids, as
  gpt-tokenizer 4.0.0's `encodeChat`.  A Chat Completions request (messages, functions / tools,
  function_call / tool_choice) -> per-field ordinary token counts + OpenAI's fixed overheads + the
  function definitions rendered as a TypeScript-like namespace -> one count, as its
  `countChatCompletionTokens`.  Content-part arrays -> their text parts as one string; their
  images -> size from the file header (`images.py`) -> tokens by OpenAI's rule for the model;
  what has no known count -> `request_report`'s `not_counted`, never dropped silently.  A
  Responses API request (`input`, `instructions`) -> the Chat Completions request it stands for.
* Harmony (`harmony.py`, gpt-oss on o200k_harmony): a conversation in openai-harmony's JSON form ->
  per message a header (role, recipient, channel, content type) and its content (the system and
  developer contents rendered into text with their sections) -> ids, as openai-harmony 0.0.8's
  `render_conversation[_for_completion]`; completion ids -> messages, as its
  `parse_messages_from_completion_tokens`.
* Hugging Face chat templates (`template.py`): messages + tools / documents / template kwargs ->
  the tokenizer_config.json's Jinja template, rendered by jinja2's sandbox with the globals and
  filters transformers gives it -> prompt text -> the tokenizer's ids (special tokens as written,
  no added BOS), as transformers 5.23.0's `apply_chat_template`.  jinja2 is the optional extra
  `anytok[chat]`, imported only when a template is rendered.

Budgets (`count`, `count_till_limit`, `fits`, `message_counts`) work on the per-message ids.

```
>>> from anytok import chat
>>> chat.count([{"role": "user", "content": "Hello!"}], model="gpt-4o")
9
```
"""

from __future__ import annotations

from typing import Any

from . import openai as _openai
from .images import image_cost, image_size, image_tokens
from .openai import NotCountedError, count_request, format_functions, request_parts, request_report


def encode(messages: Any, model: str = "gpt-4o", *, prime: str = "assistant",
           allowed_special: Any = ()) -> list[int]:
    """The ids of an OpenAI chat, as gpt-tokenizer's `encodeChat(messages)` for `model`.

    `prime` is the role the reply is primed with ("" for none); special-token text in contents
    raises `ValueError` unless `allowed_special` names it (or is "all")."""
    return [i for part in _openai.message_ids(messages, model, prime=prime,
                                              allowed_special=allowed_special) for i in part]


def message_counts(messages: Any, model: Any = "gpt-4o", *, prime: str = "assistant",
                   allowed_special: Any = (), image_sizes: Any = None, auto_detail: str = "high",
                   **template_kwargs: Any) -> list[int]:
    """What each message adds, then the reply prime's tokens as the last item; they sum to `count`.

    `model` is an OpenAI model name (a gpt-oss one counts a harmony conversation, rendered for
    completion as `harmony_render`), or a tokenizer with a chat template (`anytok.load(folder)`):
    then message i adds the tokens by which the template's rendering of messages[:i+1] outgrows
    that of messages[:i], and the last item is the generation prompt's share
    (`template_kwargs` go to `apply_chat_template`).

    An OpenAI message's content may be a content-part array: its text parts are joined (one
    string content), its images add their tokens by OpenAI's rule for the model (sizes from
    data URLs or `image_sizes`, detail "auto" as `auto_detail`: see `request_report`); any
    other part raises `ValueError`."""
    if not isinstance(model, str):
        return _template_counts(model, messages, **template_kwargs)
    if _is_harmony(model):
        from .harmony import render_parts

        return [len(p) for p in render_parts(messages if isinstance(messages, dict) else
                                             {"messages": list(messages)}, True, prime or "assistant")]
    return _openai.message_counts(messages, model, prime=prime, allowed_special=allowed_special,
                                  image_sizes=image_sizes, auto_detail=auto_detail)


def _is_harmony(model: str) -> bool:
    from ..model import encoding_name_for_model

    try:
        return encoding_name_for_model(model) == "o200k_harmony"
    except KeyError:
        return False


def _template_counts(tok: Any, messages: Any, add_generation_prompt: bool = True,
                     **kwargs: Any) -> list[int]:
    if not hasattr(tok, "apply_chat_template"):
        raise TypeError(f"model must be an OpenAI model name or a tokenizer with a chat template, "
                        f"got {type(tok).__name__}")
    msgs = list(_openai._messages(messages))
    counts, before = [], 0
    for i in range(1, len(msgs) + 1):
        n = len(tok.apply_chat_template(msgs[:i], **kwargs))
        counts.append(n - before)
        before = n
    final = len(tok.apply_chat_template(msgs, add_generation_prompt=add_generation_prompt, **kwargs))
    counts.append(final - before)
    return counts


def count(messages: Any, model: Any = "gpt-4o", **kwargs: Any) -> int:
    """The number of ids `encode(messages, model)` gives, plus the tokens of images in
    content-part arrays (see `message_counts`) (or, for a tokenizer with a chat
    template, `len(tok.apply_chat_template(messages, add_generation_prompt=True, **kwargs))`)."""
    if not isinstance(model, str):
        kwargs.setdefault("add_generation_prompt", True)
        return len(model.apply_chat_template(list(_openai._messages(messages)), **kwargs))
    return sum(message_counts(messages, model, **kwargs))


def count_till_limit(messages: Any, limit: int, model: Any = "gpt-4o", **kwargs: Any) -> int | None:
    """The count if it is at most `limit`, else None (an OpenAI chat stops encoding once over)."""
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if not isinstance(model, str) or _is_harmony(model):
        n = count(messages, model, **kwargs)
        return n if n <= limit else None
    fmt = _openai.chat_format(model)
    allowed = kwargs.get("allowed_special", ())
    total = 0
    for m in _openai._messages(messages):
        images = _openai.Images(model, kwargs.get("image_sizes"), kwargs.get("auto_detail", "high"), strict=True)
        total += len(fmt.message_ids(m, allowed, images)) + images.tokens
        if total > limit:
            return None
    total += len(fmt.prime_ids(kwargs.get("prime", "assistant"), allowed))
    return total if total <= limit else None


def fits(messages: Any, limit: int, model: Any = "gpt-4o", **kwargs: Any) -> bool:
    """Whether the chat's ids number at most `limit`."""
    return count_till_limit(messages, limit, model, **kwargs) is not None


def harmony_render(conversation: Any, for_completion: bool = True, *, next_role: str = "assistant",
                   auto_drop_analysis: bool = True) -> list[int]:
    """A harmony conversation ({"messages": [...]} in openai-harmony's JSON form, or that JSON
    text) as ids: openai-harmony 0.0.8's render_conversation_for_completion(conversation,
    Role(next_role)) with for_completion=True, else its render_conversation."""
    from .harmony import render

    return render(conversation, for_completion, next_role, auto_drop_analysis)


def harmony_parse(ids: Any, role: str | None = None) -> list[dict]:
    """Messages of gpt-oss completion ids, as openai-harmony 0.0.8's
    parse_messages_from_completion_tokens(ids, Role(role)) gives them (their to_dict form)."""
    from .harmony import parse

    return parse(ids, role)


__all__ = ["harmony_render", "harmony_parse", "encode", "count", "count_request", "count_till_limit", "fits", "message_counts",
           "format_functions", "request_parts", "request_report", "NotCountedError", "image_cost",
           "image_size", "image_tokens"]
