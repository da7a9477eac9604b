"""GPT-2's original vocabulary files: `vocab.bpe` (merges) and `encoder.json` (ids)."""

from __future__ import annotations

import json

from .tiktoken_bpe import PathOrBytes, VocabSourceError, check_hash, read_source


def _gpt2_byte_decoder() -> dict[str, int]:
    # GPT-2 maps every byte to a printable character: the printable Latin-1 bytes map to
    # themselves, the other 68 bytes to U+0100, U+0101, ... in byte order.
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + extra)] = b
            extra += 1
    return table


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe: PathOrBytes,
    encoder_json: PathOrBytes,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
) -> dict[bytes, int]:
    """Build mergeable ranks from GPT-2's `vocab.bpe` (merges) and `encoder.json` (ids).

    Ranks are: the 256 single bytes in GPT-2's byte order, then one token per merge line in
    order.  The result is checked against `encoder.json` (same tokens, same ids).
    """
    bpe_data = read_source(vocab_bpe)
    enc_data = read_source(encoder_json)
    check_hash(bpe_data, vocab_bpe_hash, "vocab.bpe")
    check_hash(enc_data, encoder_json_hash, "encoder.json")
    byte_decoder = _gpt2_byte_decoder()

    def to_bytes(word: str) -> bytes:
        try:
            return bytes(byte_decoder[c] for c in word)
        except KeyError as e:
            raise VocabSourceError(f"character {e.args[0]!r} is not in GPT-2's byte alphabet") from None

    # The single bytes come first, in the order of their printable stand-ins.
    ranks = {bytes([b]): i for i, b in enumerate(byte_decoder.values())}
    lines = bpe_data.decode("utf-8").split("\n")
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
    for lineno, line in enumerate(lines, 2):
        if not line:
            continue
        try:
            first, second = line.split()
        except ValueError:
            raise VocabSourceError(f"vocab.bpe line {lineno} is not a merge: {line[:80]!r}") from None
        token = to_bytes(first) + to_bytes(second)
        if token in ranks:
            raise VocabSourceError(f"vocab.bpe line {lineno}: merged token {token!r} appears twice")
        ranks[token] = len(ranks)
    try:
        encoder = json.loads(enc_data)
    except ValueError as e:
        raise VocabSourceError(f"encoder.json is not valid JSON: {e}") from None
    loaded = {to_bytes(k): v for k, v in encoder.items()}
    # encoder.json also holds <|endoftext|> (a special token, not a mergeable one).
    loaded.pop(b"<|endoftext|>", None)
    if loaded != ranks:
        raise VocabSourceError("encoder.json does not agree with vocab.bpe")
    return ranks
