// Types for anytok.js: tiktoken-exact tokenization in the browser (anytok under Pyodide, in a
// Web Worker).
//
//   import { AnyTok } from "./anytok.js";
//   const tok = await AnyTok.load({ encoding: "o200k_base" });
//   await tok.count("hello world");   // 2

/** How text that spells a special token (e.g. `<|endoftext|>`) is treated; as in tiktoken. */
export interface SpecialOptions {
  /** Special tokens to encode as their special id: "all", or a list.  Default: none. */
  allowedSpecial?: "all" | readonly string[] | ReadonlySet<string>;
  /**
   * Special tokens whose text makes the call fail (a rejected promise with Python's
   * ValueError message): "all" (the default: every special token not allowed), or a list;
   * `[]` turns the check off and such text is encoded as ordinary text.
   */
  disallowedSpecial?: "all" | readonly string[] | ReadonlySet<string>;
}

export interface LoadOptions {
  /** A bundled encoding: "o200k_base", "cl100k_base", ... (see `AnyTok.encodings()`). */
  encoding?: string;
  /**
   * Instead of a bundled encoding: an anytok vocab file (`.atok`), as a URL or its bytes.
   * `encoding`, if also given, must match the name stored in the file.
   */
  vocab?: string | URL | ArrayBuffer | ArrayBufferView;
  /** Where the assets are; default: the folder anytok.js was loaded from. */
  baseURL?: string | URL;
  /** Default: `anytok-assets.json` in baseURL (written by build_scripts/build_web.py). */
  manifestURL?: string | URL;
  /** Default: `worker.js` next to the manifest. */
  workerURL?: string | URL;
  /** Pyodide's folder (pyodide.mjs, pyodide.asm.wasm, ...); default: from the manifest. */
  pyodideURL?: string | URL;
  /** The anytok wheel; default: from the manifest (a slim wheel without vocabularies). */
  wheelURL?: string | URL;
  /** The worker's Python glue (worker_glue.py); default: from the manifest. */
  glueURL?: string | URL;
  /** The bundled encoding's `.atok` file; default: from the manifest. */
  vocabURL?: string | URL;
}

/** A part of the text and the token(s) that encode it (see `tokenize`). */
export interface Piece {
  text: string;
  /** Usually one id; several when a character's UTF-8 bytes are split between tokens. */
  ids: number[];
  /** UTF-16 offsets into the text given to `tokenize`. */
  start: number;
  end: number;
}

export interface RuntimeInfo {
  anytok: string;
  python: string;
  /** Optional Python methods this anytok has, e.g. "count_till_limit", "chunks". */
  methods: string[];
  /** Start-up time in the worker: Pyodide's boot, then installing and importing anytok. */
  pyodideMs: number;
  anytokMs: number;
}

/**
 * A failure: a Python exception (`pythonType` is its class name, e.g. "ValueError", and
 * `message` is Python's message), or a problem loading the runtime or a vocabulary.
 */
export declare class AnyTokError extends Error {
  readonly name: "AnyTokError";
  readonly pythonType: string | null;
  readonly traceback: string | null;
}

/**
 * One encoding.  All methods run in a shared Web Worker, in the order called, and return
 * promises; errors (including Python's) reject them with an AnyTokError.
 */
export declare class AnyTok {
  /** Load an encoding; starts the worker (Pyodide) on first use and shares it afterwards. */
  static load(options: LoadOptions): Promise<AnyTok>;
  /** Names of the bundled encodings. */
  static encodings(options?: Pick<LoadOptions, "baseURL" | "manifestURL">): Promise<string[]>;
  /** Stop every worker; existing tokenizers reject from then on. */
  static terminate(): void;

  readonly name: string;
  readonly nVocab: number;
  readonly maxTokenValue: number;
  readonly specialTokens: string[];
  /** Where the vocabulary came from this time: Cache Storage, the network, or given bytes. */
  readonly source: "cache" | "network" | "memory";
  /** Milliseconds the worker took to get and parse the vocabulary. */
  readonly loadMs: number;
  readonly runtimeInfo: RuntimeInfo;

  /** Names of the bundled encodings. */
  encodings(): string[];
  /** Token ids, as tiktoken's `encode`. Lone surrogates count as U+FFFD, as in tiktoken. */
  encode(text: string, options?: SpecialOptions): Promise<number[]>;
  /** The number of tokens `encode` would give. */
  count(text: string, options?: SpecialOptions): Promise<number>;
  /** `count` of each text, in one request. */
  countBatch(texts: readonly string[], options?: SpecialOptions): Promise<number[]>;
  /** The tokens of text as pieces of it (for showing how text is split). */
  tokenize(text: string, options?: SpecialOptions): Promise<Piece[]>;
  /** Text of the ids; invalid UTF-8 becomes U+FFFD unless `errors: "strict"`. */
  decode(ids: ArrayLike<number>, options?: { errors?: "replace" | "strict" | "ignore" }): Promise<string>;
  /**
   * The token count if it is at most `limit`, else null (without encoding the rest).
   * Present only when the Python side has `count_till_limit`.
   */
  countTillLimit?: (text: string, limit: number) => Promise<number | null>;
  /**
   * Text cut into consecutive chunks of at most `maxTokens` tokens each.
   * Present only when the Python side has `chunks`.
   */
  chunks?: (text: string, maxTokens: number, options?: { overlap?: number }) => Promise<string[]>;
  /**
   * `[head, rest]`: the longest start of text with at most `maxTokens` tokens, and the rest.
   * Present only when the Python side has `split_by_tokens`.
   */
  splitByTokens?: (text: string, maxTokens: number) => Promise<[string, string]>;
}

export default AnyTok;
