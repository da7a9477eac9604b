// The JavaScript tokenizers anytok is measured against (bundled by build_scripts/bench/bench_browser.py
// with esbuild into web/dist/bench/peers.js).  o200k_base in both.
import {
  clearMergeCache as gptTokenizerClear,
  countTokens as gptTokenizerCount,
  decode as gptTokenizerDecode,
  encode as gptTokenizerEncode,
} from "gpt-tokenizer/encoding/o200k_base";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";

let jsTiktoken = null;

export const peers = {
  "gpt-tokenizer": {
    version: "4.0.0",
    init() {},
    // Its cache of merged pieces is emptied before every timed call, as anytok's is.
    reset: () => gptTokenizerClear(),
    encode: (text) => gptTokenizerEncode(text),
    count: (text) => gptTokenizerCount(text),
    decode: (ids) => gptTokenizerDecode(ids),
  },
  "js-tiktoken": {
    version: "1.0.21",
    init() {
      jsTiktoken ??= new Tiktoken(o200kBase);
    },
    reset() {},
    encode: (text) => jsTiktoken.encode(text),
    count: (text) => jsTiktoken.encode(text).length,
    decode: (ids) => jsTiktoken.decode(ids),
  },
};
