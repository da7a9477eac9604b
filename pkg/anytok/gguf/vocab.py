"""What llama.cpp makes of a GGUF header's `tokenizer.*` keys: `LlamaVocab`.

The facts here follow llama.cpp's `src/llama-vocab.cpp` (`llama_vocab::impl::load`, as
vendored in llama-cpp-python 0.3.36): the model type, each `tokenizer.ggml.pre` name's split
expressions and flags, the token attributes (from `token_type`, then the text-based
corrections llama.cpp applies), the special token ids and the add-BOS/EOS/SEP flags.
"""

from __future__ import annotations

from .header import GGUFHeader
from ..format import VocabFormatError
from ..errors import UnsupportedTokenizerError

__all__ = ["LlamaVocab", "PRE_NAMES", "PRE_REGEXES"]

# Token attributes (bit flags, as llama.cpp's llama_token_attr).
UNDEFINED, UNKNOWN, UNUSED, NORMAL, CONTROL, USER_DEFINED, BYTE = 0, 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 5
NORMALIZED, LSTRIP, RSTRIP, SINGLE_WORD = 1 << 6, 1 << 7, 1 << 8, 1 << 9
# tokenizer.ggml.token_type values -> attribute
_TYPE_ATTR = {0: UNDEFINED, 1: NORMAL, 2: UNKNOWN, 3: CONTROL, 4: USER_DEFINED, 5: UNUSED, 6: BYTE}

_CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
_GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
_LLAMA3 = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
           "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
_QWEN2 = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
          "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
# (written with escapes: the exact code points of llama.cpp's literals, some of which have
# canonically equivalent forms that an editor may silently substitute)
_CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
_DEEPSEEK_LETTERS = (
    "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+"
)
_DEEPSEEK_PUNCT = "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"
_SPLIT_NEWLINES = "[^\\n]+|[\\n]+"

# pre-tokenizer type -> the expressions llama.cpp splits with, one after the other.
PRE_REGEXES: dict[str, list[str]] = {
    "default": ["[\\p{P}\\$\\+<=>\\^~\\|]+", _GPT2, "\\p{N}+", "[0-9][0-9][0-9]"],
    "llama3": [_LLAMA3],
    "dbrx": [_LLAMA3],
    "smaug": [_LLAMA3],
    "chatglm4": [_LLAMA3],
    "deepseek-llm": ["[\r\n]", _DEEPSEEK_LETTERS, _DEEPSEEK_PUNCT, "\\s+$", _CJK, "\\p{N}+"],
    "deepseek3-llm": [
        "\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
        "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
    ],
    "deepseek-coder": ["[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", _CJK, "\\p{N}"],
    "falcon": ["[\\p{P}\\$\\+<=>\\^~\\|`]+", _GPT2, "[0-9][0-9][0-9]"],
    "starcoder": ["\\p{N}", _GPT2],
    "gpt2": [_GPT2],
    "qwen2": [_QWEN2],
    "qwen35": [_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*"
               "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
    "poro": [" ?[^(\\s|.,!?…。，、।۔،)]+"],
    "viking": [" ?[^(\\s|.,!?…。，、।۔،)]+", "\\p{N}"],
    "seed-coder": [_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+"
                   "|\\s+(?!\\S)|\\s+"],
    "ufakzeka": ["[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
    "bailingmoe": ["'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
                   "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"],
    "laguna": [_SPLIT_NEWLINES, _QWEN2],
    "minicpm5": ["\\p{N}{1,3}", _CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                 "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
    "gemma4": [_SPLIT_NEWLINES],
}
for _alias, _same in (("stablelm2", "qwen2"), ("hunyuan", "qwen2"), ("solar-open", "qwen2"), ("grok-2", "qwen2"),
                      ("mpt", "gpt2"), ("olmo", "gpt2"), ("jais", "gpt2"), ("trillion", "gpt2"),
                      ("granite-docling", "gpt2"), ("refact", "starcoder"), ("command-r", "starcoder"),
                      ("smollm", "starcoder"), ("codeshell", "starcoder"), ("exaone", "starcoder"),
                      ("minerva", "starcoder"), ("mellum2", "starcoder"), ("bloom", "poro"),
                      ("gpt3-finnish", "poro"), ("hunyuan-dense", "deepseek3-llm"),
                      ("joyai-llm", "deepseek3-llm"), ("hy_v4", "deepseek3-llm"), ("sarvam-moe", "gemma4")):
    PRE_REGEXES[_alias] = PRE_REGEXES[_same]

# Types llama.cpp knows whose splitting anytok does not reproduce (custom C++ splitters, or
# expressions whose semantics there differ from a regex engine's).
_UNSUPPORTED_PRE = {
    "kimi-k2": "a custom Han-aware splitter in llama.cpp's unicode.cpp",
    "afmoe": "a custom digit grouping (\\p{AFMoE_digits}) in llama.cpp's unicode.cpp",
    "superbpe": "a zero-width lookahead split",
    "tiny-aya": "a digit-grouping lookahead split",
    "tekken": "lookahead letter-case classes as llama.cpp's regex engine runs them",
    "gpt4o": "lookahead letter-case classes as llama.cpp's regex engine runs them",
    "granite-emb-multi": "lookahead letter-case classes as llama.cpp's regex engine runs them",
    "youtu": "a pattern of mixed letter-case classes",
    "spark2_5": "four stacked expressions not yet verified",
    "jais2": "cascading whitespace lengths not yet verified",
    "exaone-moe": "nested letter/mark groups not yet verified",
    "chameleon": "sentinel and image token expressions",
    "whitespace": "llama.cpp's whitespace session",
}

# tokenizer.ggml.pre name -> (pre type, {flag: value}) for BPE vocabularies.
PRE_NAMES: dict[str, tuple[str, dict]] = {}


def _names(pre: str, names: str, **flags) -> None:
    for n in names.split():
        PRE_NAMES[n] = (pre, flags)


_names("default", "default")
_names("minicpm5", "minicpm5", ignore_merges=True)
_names("llama3", "llama3 llama-v3 llama-bpe falcon3 falcon-h1 pixtral midm-2.0 lfm2 jina-v5-nano",
       ignore_merges=True, add_bos=True)
_names("deepseek-llm", "deepseek-llm", clean_spaces=False)
_names("deepseek-coder", "deepseek-coder", clean_spaces=False)
_names("deepseek3-llm", "deepseek-v3", clean_spaces=False)
_names("spark2_5", "spark2_5", clean_spaces=False)
_names("youtu", "youtu", clean_spaces=False, ignore_merges=True)
_names("falcon", "falcon")
_names("mpt", "mpt")
_names("starcoder", "starcoder")
_names("gpt2", "gpt-2 phi-2 jina-es jina-de gigachat jina-v2-es jina-v2-de a.x-4.0 mellum modern-bert exaone4")
_names("jais2", "jais-2")
_names("gemma4", "gemma4 granite-embed-multi-311m", escape_whitespaces=True)
_names("sarvam-moe", "sarvam-moe", escape_whitespaces=True, clean_spaces=False)
_names("gpt2", "jina-v1-en jina-v2-code roberta-bpe", add_sep=True)
_names("whitespace", "whitespace", lowercase=False)
_names("refact", "refact")
_names("command-r", "command-r", clean_spaces=False)
_names("qwen2", "qwen2 deepseek-r1-qwen kormo f2llmv2", clean_spaces=False)
_names("qwen35", "qwen35", clean_spaces=False)
_names("stablelm2", "stablelm2")
_names("olmo", "olmo")
_names("dbrx", "dbrx")
_names("smaug", "smaug-bpe")
_names("poro", "poro-chat", clean_spaces=False)
_names("chatglm4", "chatglm-bpe", no_bos=True)
_names("chatglm4", "glm4 glm5", no_bos=True, ignore_merges=True)
_names("viking", "viking", clean_spaces=False)
_names("jais", "jais")
_names("tekken", "tekken", clean_spaces=False, ignore_merges=True, add_bos=True)
_names("smollm", "smollm", clean_spaces=False)
_names("codeshell", "codeshell")
_names("bloom", "bloom")
_names("gpt3-finnish", "gpt3-finnish")
_names("exaone", "exaone")
_names("exaone-moe", "exaone-moe")
_names("chameleon", "chameleon", add_bos=True, clean_spaces=False)
_names("minerva", "minerva-7b")
_names("qwen2", "megrez")
_names("gpt4o", "gpt-4o llama4 kanana2 talkie", clean_spaces=False)
_names("granite-emb-multi", "granite-embed-multi-97m", clean_spaces=False, ignore_merges=True)
_names("tiny-aya", "tiny_aya cohere2moe", clean_spaces=False)
_names("superbpe", "superbpe", clean_spaces=False)
_names("trillion", "trillion", clean_spaces=False)
_names("granite-docling", "granite-docling", clean_spaces=False)
_names("bailingmoe", "bailingmoe bailingmoe2 llada-moe", clean_spaces=False)
_names("seed-coder", "seed-coder", clean_spaces=False)
_names("hunyuan", "hunyuan", clean_spaces=False)
_names("hunyuan-dense", "hunyuan-dense", clean_spaces=False)
_names("hy_v4", "hy_v4", clean_spaces=False)
_names("joyai-llm", "joyai-llm", clean_spaces=False)
_names("kimi-k2", "kimi-k2", clean_spaces=False)
_names("ufakzeka", "ufakzeka", clean_spaces=False)
_names("grok-2", "grok-2", clean_spaces=False)
_names("afmoe", "afmoe", clean_spaces=False)
_names("laguna", "laguna", clean_spaces=False)
_names("minimax-m2", "minimax-m2", clean_spaces=False)
_names("solar-open", "solar-open", clean_spaces=False)
_names("mellum2", "mellum2")
_UNSUPPORTED_PRE["minimax-m2"] = _UNSUPPORTED_PRE["gpt4o"]

# Token texts llama.cpp marks as control tokens when a special id is not given (the EOT/EOM/FIM
# and end-of-generation lists of llama_vocab::impl::load).
_EOT = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
        "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>")
_EOM = ("<|eom_id|>",)
_FIM_PRE = ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>")
_FIM_SUF = ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>")
_FIM_MID = ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>")
_FIM_PAD = ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]")
_FIM_REP = ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>")
_FIM_SEP = ("<|file_sep|>",)
_EOG = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
        "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
        "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[")

_SPECIAL_KEYS = (
    ("bos", "tokenizer.ggml.bos_token_id"), ("eos", "tokenizer.ggml.eos_token_id"),
    ("eot", "tokenizer.ggml.eot_token_id"), ("eom", "tokenizer.ggml.eom_token_id"),
    ("unk", "tokenizer.ggml.unknown_token_id"), ("sep", "tokenizer.ggml.seperator_token_id"),
    ("pad", "tokenizer.ggml.padding_token_id"), ("mask", "tokenizer.ggml.mask_token_id"),
    ("fim_pre", "tokenizer.ggml.fim_pre_token_id"), ("fim_suf", "tokenizer.ggml.fim_suf_token_id"),
    ("fim_mid", "tokenizer.ggml.fim_mid_token_id"), ("fim_pad", "tokenizer.ggml.fim_pad_token_id"),
    ("fim_rep", "tokenizer.ggml.fim_rep_token_id"), ("fim_sep", "tokenizer.ggml.fim_sep_token_id"),
    ("fim_pre", "tokenizer.ggml.prefix_token_id"), ("fim_suf", "tokenizer.ggml.suffix_token_id"),
    ("fim_mid", "tokenizer.ggml.middle_token_id"),
)

MODEL_TYPES = {"llama": "SPM", "bert": "WPM", "gpt2": "BPE", "gemma4": "BPE", "t5": "UGM"}
_UNSUPPORTED_MODELS = {
    "rwkv": "RWKV's trie tokenizer", "plamo2": "PLaMo-2's tokenizer", "hybriddna": "the DNA k-mer tokenizer",
    "whitespace": "llama.cpp's whitespace session", "test": "llama.cpp's hashing test tokenizer",
    "no_vocab": "no vocabulary", "none": "no vocabulary",
}


class LlamaVocab:
    """A GGUF tokenizer as llama.cpp loads it: tokens, scores, attributes, merges, special
    ids, flags, and the model (`kind`: SPM, BPE, WPM, UGM) and pre-tokenizer type."""

    def __init__(self, header: GGUFHeader, what: str = "GGUF file"):
        kv = header.kv
        self.header = header
        self.what = what

        def get(key, types, default=None):
            v = kv.get(key, default)
            if v is not default and not isinstance(v, types):
                raise VocabFormatError(f"{what}: {key} is a {header.types.get(key)}, not what llama.cpp expects")
            return v

        model = get("tokenizer.ggml.model", str)
        if model is None:
            raise UnsupportedTokenizerError(f"{what}: a GGUF file without a tokenizer (no tokenizer.ggml.model)")
        if model in _UNSUPPORTED_MODELS or model not in MODEL_TYPES:
            raise UnsupportedTokenizerError(
                f"{what}: tokenizer.ggml.model {model!r} ({_UNSUPPORTED_MODELS.get(model, 'unknown to llama.cpp')}) "
                "is not supported by anytok")
        self.model = model
        self.kind = MODEL_TYPES[model]
        tokens = get("tokenizer.ggml.tokens", list)
        if tokens is None:
            raise VocabFormatError(f"{what}: no tokenizer.ggml.tokens")
        if header.types.get("tokenizer.ggml.tokens") != "array[string]":
            raise VocabFormatError(f"{what}: tokenizer.ggml.tokens is not an array of strings")
        n = len(tokens)
        self.tokens = [t if t else f"[EMPTY_{i}]" for i, t in enumerate(tokens)]
        scores = kv.get("tokenizer.ggml.scores")
        if scores is not None:
            if header.types["tokenizer.ggml.scores"] not in ("array[float32]", "array[int32]") or len(scores) < n:
                raise VocabFormatError(f"{what}: tokenizer.ggml.scores is not {n} float32 or int32 values")
            self.scores = [float(s) for s in scores[:n]]
        else:
            self.scores = [0.0] * n
        types = kv.get("tokenizer.ggml.token_type")
        if types is not None:
            if header.types["tokenizer.ggml.token_type"] != "array[int32]" or len(types) < n:
                raise VocabFormatError(f"{what}: tokenizer.ggml.token_type is not {n} int32 values")
            self.attrs = [_TYPE_ATTR.get(t, UNDEFINED) for t in types[:n]]
        else:
            self.attrs = [NORMAL] * n
        self.token_to_id = {t: i for i, t in enumerate(self.tokens)}
        if len(self.token_to_id) != n:
            raise VocabFormatError(f"{what}: tokenizer.ggml.tokens holds the same token twice")

        pre = get("tokenizer.ggml.pre", str)
        self.pre_name = pre
        self.add_space_prefix = False
        self.escape_whitespaces = True
        self.clean_spaces = False
        self.remove_extra_whitespaces = False
        self.ignore_merges = False
        self.add_bos = self.add_eos = self.add_sep = False
        self.lowercase = True
        self.merges_raw: list[str] = []
        sp = dict(bos=None, eos=None, eot=None, eom=None, unk=None, sep=None, pad=None, mask=None,
                  fim_pre=None, fim_suf=None, fim_mid=None, fim_pad=None, fim_rep=None, fim_sep=None)
        if self.kind == "SPM":
            sp.update(bos=1, eos=2, unk=0)
        elif self.kind == "WPM":
            sp.update(bos=101, unk=100, sep=102, pad=0, mask=103)
            self.add_sep = True
        elif self.kind == "UGM":
            sp.update(eos=1, unk=2, pad=0)
        elif model == "gpt2":
            sp.update(bos=11, eos=11)
        if self.kind == "BPE":
            merges = get("tokenizer.ggml.merges", list)
            if merges is None or header.types.get("tokenizer.ggml.merges") != "array[string]":
                raise VocabFormatError(f"{what}: a BPE vocabulary without tokenizer.ggml.merges (an array of strings)")
            self.merges_raw = merges  # "left right" strings, split at the first space after the first character
            if model == "gemma4":
                pre = "gemma4"
            self.escape_whitespaces = False
            self.clean_spaces = True
            if not pre:
                self.pre_type = "default"
            else:
                entry = PRE_NAMES.get(pre)
                if entry is None:
                    raise UnsupportedTokenizerError(f"{what}: tokenizer.ggml.pre {pre!r} is unknown to llama.cpp "
                                                    "(and to anytok)")
                self.pre_type, flags = entry
                for k, v in flags.items():
                    if k == "no_bos":
                        sp["bos"] = None
                    else:
                        setattr(self, k, v)
            if self.pre_type in _UNSUPPORTED_PRE:
                raise UnsupportedTokenizerError(
                    f"{what}: tokenizer.ggml.pre {pre!r} ({_UNSUPPORTED_PRE[self.pre_type]}) is not supported by anytok")
        else:
            self.pre_type = "default"
            if self.kind == "SPM":
                self.add_space_prefix, self.add_bos = True, True
            elif self.kind == "WPM":
                self.clean_spaces, self.add_bos, self.add_sep = True, True, True
            elif self.kind == "UGM":
                self.add_eos = True
        self.add_space_prefix = bool(get("tokenizer.ggml.add_space_prefix", bool, self.add_space_prefix))
        self.remove_extra_whitespaces = bool(get("tokenizer.ggml.remove_extra_whitespaces", bool,
                                                 self.remove_extra_whitespaces))

        for name, key in _SPECIAL_KEYS:
            if sp[name] is not None and sp[name] >= n:
                sp[name] = None
            v = kv.get(key)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise VocabFormatError(f"{what}: {key} is a {header.types.get(key)}, not an integer")
            if 0 <= v < n:
                sp[name] = v
        self.add_bos = bool(get("tokenizer.ggml.add_bos_token", bool, self.add_bos))
        self.add_eos = bool(get("tokenizer.ggml.add_eos_token", bool, self.add_eos))
        self.add_sep = bool(get("tokenizer.ggml.add_sep_token", bool, self.add_sep))
        if self.pre_type == "gemma4":
            self.add_bos = True
        self.lowercase = bool(get("tokenizer.ggml.normalizer.lowercase", bool, self.lowercase))
        self.strip_accents = bool(get("tokenizer.ggml.normalizer.strip_accents", bool, self.lowercase))

        # Text-based corrections: tokens llama.cpp recognizes as EOT/EOM/FIM become control tokens.
        attrs = self.attrs
        t2i = self.token_to_id
        for name, texts in (("eot", _EOT), ("eom", _EOM), ("fim_pre", _FIM_PRE), ("fim_suf", _FIM_SUF),
                            ("fim_mid", _FIM_MID), ("fim_pad", _FIM_PAD), ("fim_rep", _FIM_REP), ("fim_sep", _FIM_SEP)):
            if sp[name] is not None:
                continue
            found = [t2i[t] for t in texts if t in t2i]
            if found:
                # llama.cpp keeps the first it meets in an unordered map (an order C++ leaves
                # open; here the list's order); every match is made a control token.
                sp[name] = found[0]
                for i in found:
                    attrs[i] |= CONTROL
        # Control tokens whose text says "unused" are unused.
        for i, t in enumerate(self.tokens):
            if attrs[i] & CONTROL and "unused" in t:
                attrs[i] |= UNUSED
        eog = {sp[k] for k in ("fim_pad", "fim_rep", "fim_sep") if sp[k] is not None}
        for t in _EOG:
            i = t2i.get(t)
            if i is not None:
                eog.add(i)
                attrs[i] |= CONTROL
        for t in ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"):
            if t in t2i:
                attrs[t2i[t]] = USER_DEFINED
        for k in ("eos", "eot", "eom"):
            if sp[k] is not None:
                eog.add(sp[k])
        texts = {self.tokens[i] for i in eog}
        if ("<|return|>" in texts and "<|call|>" in texts or "<|calls|>" in texts and "<|flush|>" in texts) \
                and "<|end|>" in texts:
            eog.discard(t2i["<|end|>"])
            attrs[t2i["<|end|>"]] = USER_DEFINED
        if ("<|tool_response>" in texts or "<|plamo:eos|>" in texts) and "</s>" in texts:
            eog.discard(t2i["</s>"])
            attrs[t2i["</s>"]] = NORMAL
        self.special = sp
        self.eog = sorted(eog)

        # Per-model attributes (lstrip / rstrip) llama.cpp sets by name.
        name = str(kv.get("general.name") or "").lower()
        arch = str(kv.get("general.architecture") or "")
        pre_s = pre or ""
        if any(s in pre_s for s in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or \
                any(s in arch for s in ("nomic-bert-moe", "jina-bert-v3")):
            if "<mask>" in t2i:
                attrs[t2i["<mask>"]] |= LSTRIP
        elif "phi-3" in name or "phi3" in name:
            for i in self.special_cache():
                attrs[i] |= RSTRIP
            for t in ("</s>",):
                if t in t2i:
                    attrs[t2i[t]] |= RSTRIP
            for t in ("<unk>", "<s>", "<|endoftext|>"):
                if t in t2i:
                    attrs[t2i[t]] &= ~RSTRIP
        elif "modern-bert" in name and "[MASK]" in t2i:
            attrs[t2i["[MASK]"]] |= LSTRIP

    def special_cache(self) -> list[int]:
        """Ids of the control, user-defined and unknown tokens, longest text first."""
        ids = [i for i, a in enumerate(self.attrs) if a & (CONTROL | USER_DEFINED | UNKNOWN)]
        ids.sort(key=lambda i: -len(self.tokens[i].encode("utf-8")))
        return ids

    @property
    def chat_template(self) -> str | None:
        t = self.header.kv.get("tokenizer.chat_template")
        return t if isinstance(t, str) else None
