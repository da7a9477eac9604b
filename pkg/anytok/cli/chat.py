"""`anytok count --chat FILE.json`: the tokens of a conversation as the model sees it.

FILE.json ('-' for stdin) holds a messages array, a whole Chat Completions request body or a
Responses API one (`input`, `instructions`).  Each `-m MODEL` (default gpt-4o) counts it as
anytok.chat does: a messages array as `chat.count` (gpt-tokenizer's encodeChat), a request body
as `chat.request_report` (its countChatCompletionTokens: functions / tools, tool calls,
content-part arrays; images by OpenAI's rules).  What has no known count is left out of the
total and named on stderr, and the exit status is then 1.  Each `--vocab FOLDER` counts the
rendering of its tokenizer_config.json's chat template with a generation prompt (the request's
`tools` passed on).  A gpt-oss model counts a harmony conversation (openai-harmony's JSON form)
rendered for completion.  `-v` prints what each message adds; `--json` one JSON document;
`--max-tokens N` exits with status 3 when a count exceeds N.
"""

from __future__ import annotations

import json
import sys

EXIT_OK, EXIT_ERROR, EXIT_BUDGET = 0, 1, 3
EXIT_NOT_COUNTED = 1  # as `anytok count`'s skipped files: the total of the rest is printed


def _read(path: str):
    try:
        data = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    except OSError as e:
        raise SystemExit(f"anytok: error: cannot read {path}: {e.strerror or e}")
    try:
        doc = json.loads(data)
    except ValueError as e:
        raise SystemExit(f"anytok: error: {path}: not valid JSON ({e})")
    if isinstance(doc, dict) and (isinstance(doc.get("messages"), list) or "input" in doc):
        return doc, True
    if isinstance(doc, list):
        return {"messages": doc}, False
    raise SystemExit(f"anytok: error: {path}: neither a messages array nor a request with 'messages' "
                     "or 'input'")


def _parts(kind: str, value: str, request: dict, is_request: bool, skipped: list) -> list[tuple[str, int]]:
    from .. import chat

    if kind == "model" and is_request and not chat._is_harmony(value):
        report = chat.request_report(request, value)
        skipped += [f"{x['where']}: {x['why']}" for x in report["not_counted"]]
        return [(p["part"], p["tokens"]) for p in report["parts"]]
    if "messages" not in request:
        raise ValueError("a Responses API request is counted for OpenAI models (-m) only")
    messages = request["messages"]
    if kind == "model":
        if chat._is_harmony(value):  # a harmony conversation ({"messages": [...]}), rendered for completion
            counts = chat.message_counts(request, value)
        else:
            counts = chat.message_counts(messages, value)
    elif kind == "vocab":
        from ..files import load

        tok = load(value)
        counts = chat.message_counts(messages, tok, tools=request.get("tools"))
    else:
        raise SystemExit(f"anytok: error: --chat counts for models (-m) and tokenizer folders with a chat "
                         f"template (--vocab), not for the encoding {value!r}")
    labels = [f"message {i + 1} ({m.get('role') if isinstance(m, dict) else '?'})"
              for i, m in enumerate(messages)]
    if len(counts) != len(messages) + 1:  # harmony left analysis messages out
        labels = [f"rendered message {i + 1}" for i in range(len(counts) - 1)]
    return list(zip(labels + ["reply priming"], counts))


def cmd_count_chat(args) -> int:
    request, is_request = _read(args.chat)
    specs = args.tokenizers or [("model", request.get("model") or "gpt-4o")]
    results = []
    skipped: dict[str, list[str]] = {}
    for kind, value in specs:
        try:
            parts = _parts(kind, value, request, is_request, skipped.setdefault(value, []))
        except (ValueError, TypeError, ImportError) as e:
            print(f"anytok: {args.chat}: {value}: {e}", file=sys.stderr)
            return EXIT_ERROR
        results.append((value, parts, sum(n for _, n in parts)))
    over = [(label, total) for label, _, total in results
            if args.max_tokens is not None and total > args.max_tokens]
    if args.json:
        doc = {"file": args.chat, "kind": "request" if is_request else "messages",
               "results": [{"tokenizer": label, "tokens": total,
                            "parts": [{"part": p, "tokens": n} for p, n in parts],
                            "not_counted": skipped.get(label, [])}
                           for label, parts, total in results]}
        doc["tokens"] = results[0][2]
        if args.max_tokens is not None:
            doc["max_tokens"] = args.max_tokens
            doc["over_budget"] = bool(over)
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        for label, parts, total in results:
            if args.verbose:
                width = max(len(str(n)) for n in [total] + [n for _, n in parts])
                for p, n in parts:
                    print(f"{n:>{width}}  {p}")
                print(f"{total:>{width}}  total ({label})")
            elif len(results) > 1:
                print(f"{total}  {label}")
            else:
                print(total)
        for label, total in over:
            print(f"anytok: {total} tokens ({label}) exceed --max-tokens {args.max_tokens}", file=sys.stderr)
    for label, notes in skipped.items():
        for note in notes:
            print(f"anytok: {args.chat}: {label}: not counted: {note}", file=sys.stderr)
    if over:
        return EXIT_BUDGET
    return EXIT_NOT_COUNTED if any(skipped.values()) else EXIT_OK
