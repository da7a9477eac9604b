// The JavaScript tokenizers anytok is measured against (bundled by build_scripts/bench_browser.py
// with esbuild into web/dist/bench/peers.js).  o200k_base in both.
import { encode as gptTokenizerEncode } from "gpt-tokenizer/encoding/o200k_base";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";

let jsTiktoken = null;

export const peers = {
  "gpt-tokenizer": {
    version: "4.0.0",
    init() {},
    encode: (text) => gptTokenizerEncode(text),
  },
  "js-tiktoken": {
    version: "1.0.21",
    init() {
      jsTiktoken ??= new Tiktoken(o200kBase);
    },
    encode: (text) => jsTiktoken.encode(text),
  },
};
