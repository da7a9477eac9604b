// Types for anytok.js: tiktoken-exact tokenization in the browser (anytok under Pyodide, in a
// Web Worker), and in Node >= 20 (a worker_threads Worker; files read from the package folder).
//
//   import { AnyTok } from "./anytok.js";
//   const tok = await AnyTok.load({ encoding: "o200k_base" });
//   await tok.count("hello world");   // 2
//   const llama = await AnyTok.load({ url: "/models/tokenizer.json" });   // any tokenizer file

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

/**
 * Options of `encode`, `count`, `countBatch` and `tokenize`.  `allowedSpecial` and
 * `disallowedSpecial` apply to tiktoken-style encodings (`kind` "encoding"), `addSpecialTokens`
 * to the others; an option given for the wrong kind rejects with a ValueError saying so.
 */
export interface EncodeOptions extends SpecialOptions {
  /**
   * Hugging Face and SentencePiece tokenizers: add the special tokens the tokenizer adds around
   * a text (its post-processor's, e.g. BOS; `add_special_tokens=True`).  Default false, as in
   * anytok (Hugging Face's default is true).  Special tokens written in the text are matched
   * either way, as the tokenizer does.
   */
  addSpecialTokens?: boolean;
}

/** `encode`'s options with `offsets: true`: it then resolves to `EncodingWithOffsets`. */
export interface OffsetsOptions extends EncodeOptions {
  offsets: true;
}

/**
 * `encode(text, { offsets: true })`: the ids, and for each token its `[start, end)` in `text` as
 * UTF-16 indexes (what `text.slice(start, end)` takes).  These are the tokenizer's own offsets
 * (Hugging Face `tokenizers`' for a tokenizer.json; SentencePiece's; for a tiktoken-style encoding
 * the characters its bytes come from), mapped from code points to UTF-16.  A token holding part
 * of a character's UTF-8 bytes spans that whole character (tokens may then share it); a token
 * the tokenizer adds (a BOS) has an empty span.
 */
export interface EncodingWithOffsets {
  ids: number[];
  offsets: Array<[number, number]>;
}

/**
 * What a tokenizer is: tiktoken-style, a Hugging Face tokenizer.json pipeline, SentencePiece,
 * or the tokenizer of a GGUF model file (llama.cpp's ids).
 */
export type TokenizerKind = "encoding" | "hf" | "sentencepiece" | "gguf";

export interface LoadOptions {
  /** A bundled encoding: "o200k_base", "cl100k_base", ... (see `AnyTok.encodings()`). */
  encoding?: string;
  /**
   * Instead of a bundled encoding: a tokenizer file, as a URL (fetched by the worker) or its
   * bytes.  Any file `anytok.load` reads: an anytok `.atok` (tiktoken-style, or a converted
   * tokenizer.json / SentencePiece model), a Hugging Face `tokenizer.json`, a SentencePiece
   * `.model`, a Mistral tekken `.json`.  `encoding`, if also given, must match the tokenizer's
   * name.  Give one of `vocab`, `url`, `data` and `file`.
   */
  vocab?: string | URL | ArrayBuffer | ArrayBufferView;
  /** A tokenizer file by URL (as `vocab` with a URL). */
  url?: string | URL;
  /**
   * A tokenizer file's bytes (as `vocab` with bytes), e.g. from a file input; or its text (a
   * tokenizer.json read as a string).
   */
  data?: ArrayBuffer | ArrayBufferView | string;
  /**
   * A Hugging Face tokenizer's `tokenizer_config.json` (its text, bytes or parsed object), whose
   * chat template `applyChatTemplate` renders (as `anytok.load(..., config=...)` natively).
   * With a tokenizer.json given by `url`, `data`, `vocab` or `file`.
   */
  config?: string | ArrayBuffer | ArrayBufferView | object;
  /**
   * A tokenizer file as a `File` or `Blob` (from a file input or a drop): any file `data` takes,
   * or a GGUF model file (llama.cpp, Ollama, LM Studio), of which only the header is read
   * (`Blob.slice` of its first megabytes, never the weights), giving llama.cpp's ids
   * (`kind` "gguf").  A `File`'s name is its `fileName` unless one is given.
   */
  file?: Blob;
  /**
   * With `data` or `file`: the file's name, used in error messages and, without extensions, as the
   * tokenizer's name when the file holds none (a tokenizer.json or .model).  A URL's file name
   * is used that way already.
   */
  fileName?: string;
  /** Where the assets are; default: the folder anytok.js was loaded from. */
  baseURL?: string | URL;
  /** Default: `anytok-assets.json` in baseURL (written by build_scripts/build_web.py). */
  manifestURL?: string | URL;
  /** Default: `worker.js` next to the manifest. */
  workerURL?: string | URL;
  /** Pyodide's folder (pyodide.mjs, pyodide.asm.wasm, ...); default: from the manifest. */
  pyodideURL?: string | URL;
  /**
   * Pyodide's standard library zip; default: from the manifest (the stdlib compiled to .pyc by
   * build_web.py, which makes Python start several times faster).  `null`: the stock
   * `python_stdlib.zip` in pyodideURL.
   */
  stdlibURL?: string | URL | null;
  /**
   * Start the worker from a memory snapshot of Python with anytok imported (default true): the
   * first start makes it and keeps it in Cache Storage (~30 MB), later starts restore it, which
   * skips Python's start and anytok's import; a snapshot that cannot be restored falls back to a
   * normal start.  Uses Pyodide's private snapshot API; `false` never makes nor uses one.
   */
  snapshot?: boolean;
  /** The anytok wheel; default: from the manifest (a slim wheel without vocabularies). */
  wheelURL?: string | URL;
  /** The worker's Python glue (worker_glue.py); default: from the manifest. */
  glueURL?: string | URL;
  /** The bundled encoding's `.atok` file; default: from the manifest. */
  vocabURL?: string | URL;
  /**
   * Web Workers that share the work on long texts (default 1).  With N > 1 a tiktoken-style
   * encoding is loaded in N workers, and `encode` / `count` of a text of 128 Ki characters or
   * more cut it into N blocks, handled at once and joined where their pieces meet: the ids are
   * exactly one worker's; `countBatch` of texts adding up to that much shares them out.  Text
   * that spells a special token, `allowedSpecial`, and other kinds of tokenizer use one
   * worker.  Each worker boots its own Pyodide (memory and start time); the first is the one
   * every other tokenizer with the same URLs uses.  An extra worker that cannot start is left
   * out with a console warning (the tokenizer's `workers` says how many run); only the first
   * worker's failure rejects the load.
   */
  workers?: number;
}

/** A part of the text and the token(s) that encode it (see `tokenize`). */
export interface Piece {
  text: string;
  /** Usually one id; several when tokens share a character (its UTF-8 bytes split between
   * them); none for text no token covers (a normalizer removed it). */
  ids: number[];
  /** UTF-16 offsets into the text given to `tokenize`. */
  start: number;
  end: number;
  /** The UTF-8 bytes of each id's own text (-1 where the page cannot tell). */
  byteLengths: number[];
  /** Always true: the pieces come from the tokenizer's exact offsets (`encode(text, { offsets: true })`),
   * which every format has (kept for code written when GGUF WordPiece and Unigram files had none). */
  exact: boolean;
}

export interface RuntimeInfo {
  anytok: string;
  python: string;
  /** Optional Python methods this anytok has, e.g. "count_till_limit", "chunks". */
  methods: string[];
  /** Start-up time in the worker: Pyodide's boot, then installing and importing anytok. */
  pyodideMs: number;
  anytokMs: number;
  /** Whether the stdlib, anytok and the glue ran from the .pyc build_web.py compiled. */
  compiled: { stdlib: boolean; anytok: boolean; glue: boolean };
  /** The start-up snapshot: made on this start, restored, or not used. */
  snapshot: "made" | "restored" | "off" | "too big" | "failed";
  /** anytok's files: unpacked at the start, or (after a restore) when Python first looks for a
   * module the snapshot does not hold, or once the worker is idle. */
  files: "unpacked" | "on demand";
}

/** What `tok.constrain` constrains the output to (exactly one). */
export type ConstrainSpec =
  | { regex: string; jsonSchema?: undefined; grammar?: undefined; gbnf?: undefined }
  | { jsonSchema: object | boolean | string; regex?: undefined; grammar?: undefined; gbnf?: undefined }
  | { grammar: string; regex?: undefined; jsonSchema?: undefined; gbnf?: undefined }
  | { gbnf: string; regex?: undefined; jsonSchema?: undefined; grammar?: undefined };

/** A generation under a constraint (anytok.constrain, llguidance's semantics), in the worker. */
export declare class Matcher {
  /** Where the tokenizer's token trie came from: "file" (kept by an earlier page or process:
   *  Cache Storage, or Node's cache folder) or "built" (by this worker). */
  readonly trie: "file" | "built";
  /** The allowed tokens: bit (id % 32) of word (id >> 5), little-endian (llguidance's layout). */
  mask(): Promise<Uint32Array>;
  /** The allowed token ids, ascending. */
  allowed(): Promise<number[]>;
  /** Consume a token: false (and no change) if it is not allowed. */
  consume(tokenId: number): Promise<boolean>;
  /** The output so far is complete (end-of-sequence allowed). */
  isAccepting(): Promise<boolean>;
  /** The last consume left nothing but end-of-sequence possible. */
  isStopped(): Promise<boolean>;
  /** Tokens forced from here. */
  forced(): Promise<number[]>;
  /** Undo the last n consumed tokens; resolves to how many remain. */
  rollback(n: number): Promise<number>;
  /** Undo every consumed token. */
  reset(): Promise<void>;
  /** Drop the matcher's state in the worker. */
  free(): Promise<void>;
}

/** What `AnyTok.train` trains: anytok.train's options (see the README's "Training"). */
export interface TrainOptions extends Pick<LoadOptions, "baseURL" | "manifestURL" | "workerURL" | "pyodideURL" | "stdlibURL" | "wheelURL" | "glueURL" | "snapshot"> {
  /**
   * Tokens in all.  Style "hf": the special tokens, the 256 byte-level characters and the
   * merges; style "tiktoken": the 256 bytes and the merges (special tokens come on top).
   */
  vocabSize: number;
  /**
   * "hf" (default): what Hugging Face tokenizers' BpeTrainer learns, ids as in its
   * tokenizer.json; "tiktoken": what rustbpe learns, ranks as in a .tiktoken file.
   */
  style?: "hf" | "tiktoken";
  /** The split pattern: a bundled encoding's name ("o200k_base", the default; "cl100k_base") or a regex. */
  pattern?: string;
  /** Special tokens, e.g. ["<|endoftext|>"]; default none. */
  specialTokens?: readonly string[];
  /** Stop at the first pair seen fewer times than this; default 0. */
  minFrequency?: number;
  /** Style "hf": BpeTrainer's max_token_length. */
  maxTokenLength?: number | null;
  /** The tokenizer's name; default "trained". */
  name?: string;
  /** "bpe" (the default, byte-level BPE with these options; see `KindTrainOptions` for the other kinds). */
  kind?: "bpe";
}

type TrainURLOptions = Pick<LoadOptions, "baseURL" | "manifestURL" | "workerURL" | "pyodideURL" | "stdlibURL" | "wheelURL" | "glueURL" | "snapshot">;

/**
 * A SentencePiece model (anytok.train with style "sentencepiece"): `files.model` is the `.model`
 * file `sentencepiece`'s `SentencePieceTrainer.train(sentence_iterator=texts, ...)` writes for the
 * same options (each of the texts is one sentence: split a file at "\n" as spm_train does).
 * The options are SentencePieceTrainer's, camelCase; options not listed here are rejected.
 */
export interface SentencePieceTrainOptions extends TrainURLOptions {
  kind: "unigram" | "bpe" | "char" | "word";
  /** Required for kind "bpe" (else byte-level BPE); the default for the other kinds. */
  style?: "sentencepiece";
  vocabSize: number;
  /** Default 0.9995; 0.98 to 1. */
  characterCoverage?: number;
  byteFallback?: boolean;
  splitDigits?: boolean;
  splitByWhitespace?: boolean;
  splitByUnicodeScript?: boolean;
  splitByNumber?: boolean;
  maxSentencepieceLength?: number;
  userDefinedSymbols?: readonly string[] | string;
  controlSymbols?: readonly string[] | string;
  /**
   * Default "nmt_nfkc"; built in: "nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity"
   * (another rule needs `precompiledCharsmap`).
   */
  normalizationRuleName?: string;
  /** The rule's table (e.g. the precompiled_charsmap of a .model trained with that rule). */
  precompiledCharsmap?: Uint8Array;
  addDummyPrefix?: boolean;
  removeExtraWhitespaces?: boolean;
  inputSentenceSize?: number;
  shuffleInputSentence?: boolean;
  seedSentencepieceSize?: number;
  shrinkingFactor?: number;
  numSubIterations?: number;
  /** Default 16, as sentencepiece's; the result depends on it (its E-step's striping), the speed does not. */
  numThreads?: number;
  unkId?: number;
  bosId?: number;
  eosId?: number;
  padId?: number;
  unkPiece?: string;
  bosPiece?: string;
  eosPiece?: string;
  padPiece?: string;
  unkSurface?: string;
  hardVocabLimit?: boolean;
  useAllVocab?: boolean;
  treatWhitespaceAsSuffix?: boolean;
  allowWhitespaceOnlyPieces?: boolean;
  maxSentenceLength?: number;
  name?: string;
}

/** The options tokenizers' WordPieceTrainer and WordLevelTrainer share (anytok.hf). */
export interface WordTrainOptions extends TrainURLOptions {
  style?: "hf";
  vocabSize: number;
  minFrequency?: number;
  /** Default: WordPiece ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], WordLevel ["[UNK]"]. */
  specialTokens?: readonly string[];
  /** Default "[UNK]". */
  unkToken?: string;
  /** Default true. */
  lowercase?: boolean;
  name?: string;
}

/**
 * tokenizers' WordLevelTrainer (anytok.hf): a Lowercase normalizer (unless `lowercase: false`),
 * the Whitespace pre-tokenizer and a WordLevel model, each word a token (others `unkToken`);
 * `files.tokenizerJson` is what tokenizers would save.
 */
export interface WordLevelTrainOptions extends WordTrainOptions {
  kind: "wordlevel";
}

/**
 * tokenizers' WordPieceTrainer (anytok.hf) with BERT's pipeline: BertNormalizer(lowercase),
 * BertPreTokenizer, the WordPiece decoder and, when [CLS] and [SEP] are special tokens,
 * TemplateProcessing "[CLS] $A [SEP]"; `files.tokenizerJson` is what tokenizers would save.
 */
export interface WordPieceTrainOptions extends WordTrainOptions {
  kind: "wordpiece";
  stripAccents?: boolean | null;
  limitAlphabet?: number;
  /** Default "##". */
  continuingSubwordPrefix?: string;
}

/** tokenizers' UnigramTrainer (anytok.hf) with NFKC and Metaspace; `files.tokenizerJson`. */
export interface HfUnigramTrainOptions extends TrainURLOptions {
  kind: "unigram";
  style: "hf";
  vocabSize: number;
  /** Default ["<unk>"]. */
  specialTokens?: readonly string[];
  /** Default "<unk>". */
  unkToken?: string;
  shrinkingFactor?: number;
  maxPieceLength?: number;
  nSubIterations?: number;
  name?: string;
}

/** What `AnyTok.train` trains besides byte-level BPE. */
export type KindTrainOptions = SentencePieceTrainOptions | WordPieceTrainOptions | WordLevelTrainOptions | HfUnigramTrainOptions;

/**
 * A progress report of training another kind than byte-level BPE: reading the texts (characters
 * of the total), then the trainer's steps.
 */
export type KindTrainProgress =
  | { phase: "read"; sentences: number; chars: number; total: number; finished: boolean }
  | {
      phase: "train";
      step: "normalize" | "alphabet" | "pieces" | "write";
      finished: boolean;
      /**
       * SentencePiece, step "pieces": BPE's pieces so far (every 100) of `target`; Unigram's after
       * its seeds and each EM round, shrinking towards `target`.  At the end: the model's pieces.
       */
      pieces?: number;
      target?: number;
    };

/** A progress report of `AnyTok.train`: counting the pieces of the texts, then merging. */
export type TrainProgress =
  | { phase: "count"; mb: number; mbPerS: number; texts: number; distinct: number; finished: boolean }
  | { phase: "merge"; done: number; total: number; etaS: number | null; finished: boolean };

export interface TrainControl<P = TrainProgress> {
  /** Called now and then while training (a few times a second at most). */
  onProgress?: (progress: P) => void;
  /**
   * Aborting it cancels the training: the training worker is terminated and the promise
   * rejects with the signal's reason (an "AbortError" DOMException by default).
   */
  signal?: AbortSignal;
}

/** What a tokenizer made by `AnyTok.train` was trained as, and its files. */
export type TrainingInfo = ByteBpeTrainingInfo | KindTrainingInfo;

/** Another kind than byte-level BPE. */
export interface KindTrainingInfo {
  readonly kind: "unigram" | "bpe" | "char" | "word" | "wordpiece" | "wordlevel";
  readonly style: "sentencepiece" | "hf";
  readonly nVocab: number;
  /** Seconds the training took in the worker. */
  readonly trainSeconds: number;
  readonly files: {
    /** Style "sentencepiece": the .model file's bytes. */
    readonly model?: Uint8Array;
    /** Style "hf": the tokenizer.json text. */
    readonly tokenizerJson?: string;
    readonly atok?: undefined;
    readonly tiktoken?: undefined;
  };
}

/** Byte-level BPE. */
export interface ByteBpeTrainingInfo {
  readonly kind: "bpe";
  readonly style: "hf" | "tiktoken";
  readonly nVocab: number;
  readonly nMerges: number;
  /** The split pattern, as a regex. */
  readonly pattern: string;
  readonly specialTokens: string[];
  /** Seconds anytok.train took in the worker. */
  readonly trainSeconds: number;
  /** The merges in the order learned: (left id, right id, new id) triples, flattened. */
  readonly merges: Int32Array;
  readonly files: {
    /** An anytok .atok file of the tokenizer. */
    readonly atok: Uint8Array;
    /** Style "hf": the tokenizer.json text, as BpeTrainer would have written it. */
    readonly tokenizerJson?: string;
    /** Style "tiktoken": the .tiktoken file's text (base64 token, space, rank). */
    readonly tiktoken?: string;
  };
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
 * One tokenizer: a bundled encoding or a loaded file.  All methods run in a shared Web Worker,
 * in the order called, and return promises; errors (including Python's) reject them with an
 * AnyTokError.
 */
/** An OpenAI chat message (content a string or an array of content parts). */
export interface ChatMessage {
  role?: string;
  name?: string;
  content: string | null | readonly ChatContentPart[];
  function_call?: { name?: string; arguments?: string };
  tool_calls?: readonly { id?: string; type?: "function"; function: { name?: string; arguments?: string } }[];
  tool_call_id?: string;
}

/** A content part: text, an image (by URL or data URL, with its detail), or any other (reported, not counted). */
export type ChatContentPart =
  | { type: "text" | "input_text" | "output_text"; text: string }
  | { type: "image_url"; image_url: string | { url: string; detail?: "low" | "high" | "auto" } }
  | { type: "input_image"; image_url?: string; file_id?: string; detail?: "low" | "high" | "auto" }
  | { type: string; [field: string]: unknown };

/** A Chat Completions request body (what countChat counts of it). */
export interface ChatRequest {
  model?: string;
  messages: readonly ChatMessage[];
  functions?: readonly { name: string; description?: string; parameters?: object }[];
  function_call?: "auto" | "none" | { name: string };
  tools?: readonly { type: "function"; function: { name: string; description?: string; parameters?: object } }[];
  tool_choice?: "auto" | "none" | { type: "function"; function: { name: string } };
}

/** A Responses API request body: counted as the Chat Completions request it stands for. */
export interface ResponsesRequest {
  model?: string;
  input: string | readonly object[];
  instructions?: string;
  tools?: readonly object[];
  tool_choice?: unknown;
  [field: string]: unknown;
}

export interface RequestCountOptions {
  /** Sizes of images given by URL or file id: {url: [width, height]} (data URLs are read). */
  imageSizes?: Record<string, readonly [number, number]>;
  /** How detail "auto" is priced: "high" (default) or "low". */
  autoDetail?: "high" | "low";
}

/** anytok.chat.request_report: the tokens, the parts that sum to them, and what is not counted. */
export interface ChatRequestReport {
  model: string;
  tokens: number;
  parts: { part: string; tokens: number }[];
  not_counted: { where: string; why: string }[];
}

/** A harmony conversation in openai-harmony's JSON form. */
export interface HarmonyConversation {
  messages: readonly object[];
}

export interface ChatOptions {
  /** The OpenAI model (its chat layout); it must use the tokenizer's encoding. */
  model?: string;
  /** The role the reply is primed with ("" for none); default "assistant". */
  prime?: string;
  /** Harmony: render for completion (default true). */
  forCompletion?: boolean;
}

/** A message for a Hugging Face chat template: any JSON the template reads. */
export interface TemplateMessage {
  role: string;
  content?: string | readonly object[] | null;
  [field: string]: unknown;
}

/**
 * `applyChatTemplate`'s options, as transformers' `apply_chat_template` arguments; any other key
 * is a variable of the template (Qwen 3's `enable_thinking: false`, a `date_string`, ...).
 */
export interface ChatTemplateOptions {
  /** JSON Schema tool definitions (`{ type: "function", function: { name, description, parameters } }`). */
  tools?: readonly object[];
  /** Retrieval documents (`{ title, text }`), for templates that take them. */
  documents?: readonly object[];
  /** End with the header of the assistant's reply (default false; true with `perMessage`). */
  addGenerationPrompt?: boolean;
  /** End inside the last message, to continue it (or the name of the field to continue). */
  continueFinalMessage?: boolean | string;
  /** false: the prompt's text instead of its ids (default true). */
  tokenize?: boolean;
  /** A template of the config by name (when it has several), or a Jinja template's source. */
  chatTemplate?: string;
  /** What each message adds, then the generation prompt's share (they sum to the count). */
  perMessage?: boolean;
  [templateVariable: string]: unknown;
}

export declare class AnyTok {
  /** Load an encoding; starts the worker (Pyodide) on first use and shares it afterwards. */
  /** Called as each file a worker fetches while it starts comes in (Pyodide, the standard
   * library, the wheel, a vocabulary): bytes so far; `total` is null when not known (a
   * compressed response). */
  static onDownload: ((download: { url: string; loaded: number; total: number | null; done: boolean }) => void) | null;
  static load(options: LoadOptions): Promise<AnyTok>;
  /** Names of the bundled encodings. */
  static encodings(options?: Pick<LoadOptions, "baseURL" | "manifestURL">): Promise<string[]>;
  /**
   * Stop every worker; existing tokenizers reject from then on.  (Node's worker thread keeps
   * the process alive only while an answer is awaited; Deno's and Bun's workers keep it alive
   * until this is called.)
   */
  static terminate(): void;
  /**
   * Train a byte-level BPE tokenizer on texts (anytok.train, in a Web Worker of its own);
   * resolves to a tokenizer like `load`'s, with `training` set.
   */
  static train(texts: readonly string[], options: TrainOptions, control?: TrainControl): Promise<AnyTok>;
  /**
   * Train a SentencePiece model (`files.model`: sentencepiece's .model bytes) or tokenizers'
   * WordPiece or Unigram (`files.tokenizerJson`) on texts, each one sentence.
   */
  static train(texts: readonly string[], options: KindTrainOptions, control?: TrainControl<KindTrainProgress>): Promise<AnyTok>;

  readonly name: string;
  /**
   * "encoding" for bundled encodings, .atok vocabularies and tekken files; "gguf" for GGUF
   * model files (`encode` as llama.cpp with parse_special=false; `addSpecialTokens: true` adds
   * what llama.cpp adds for that file).
   */
  readonly kind: TokenizerKind;
  readonly nVocab: number;
  readonly maxTokenValue: number;
  /**
   * Encodings and Hugging Face tokenizers: their special tokens.  SentencePiece: its control
   * pieces (`<s>`, `</s>`, ...), which encode never finds in text.
   */
  readonly specialTokens: string[];
  /**
   * Where the vocabulary came from this time: Cache Storage, the network, or given bytes.
   * Bundled encodings are kept in Cache Storage; files loaded by URL are fetched each time
   * (through the browser's HTTP cache).  Under Node, "snapshot": the worker was restored from
   * a start-up snapshot that already held this encoding (docs/browser.md).
   */
  readonly source: "cache" | "network" | "memory" | "snapshot";
  /** Milliseconds the worker took to get and parse the vocabulary. */
  readonly loadMs: number;
  /** Whether `applyChatTemplate` has a template (loaded with a tokenizer_config.json that holds one). */
  readonly hasChatTemplate: boolean;
  readonly runtimeInfo: RuntimeInfo;
  /** Tiktoken-style encodings (`kind` "encoding"): the split pattern; null otherwise. */
  readonly pattern: string | null;
  /** Tokenizers made by `AnyTok.train`: what was trained and the files to save; null otherwise. */
  readonly training: TrainingInfo | null;
  /** Workers that share long texts: `load`'s `workers` for a tiktoken-style encoding (fewer if
   * an extra one could not start), else 1. */
  readonly workers: number;

  /** Names of the bundled encodings. */
  encodings(): string[];
  /** Token ids, as tiktoken's `encode`. Lone surrogates count as U+FFFD, as in tiktoken. */
  encode(text: string, options?: EncodeOptions & { offsets?: false }): Promise<number[]>;
  /** Token ids and each token's UTF-16 span in `text` (see `EncodingWithOffsets`).  Rejects with
   * an error saying so for a tokenizer that has no offsets (a GGUF whose tokens do not spell the text). */
  encode(text: string, options: OffsetsOptions): Promise<EncodingWithOffsets>;
  /** The number of tokens `encode` would give. */
  count(text: string, options?: EncodeOptions): Promise<number>;
  /** `count` of each text, in one request. */
  countBatch(texts: readonly string[], options?: EncodeOptions): Promise<number[]>;
  /** An OpenAI chat's ids (gpt-tokenizer's encodeChat), or a harmony conversation's on o200k_harmony. */
  encodeChat(messages: readonly ChatMessage[] | HarmonyConversation, options?: ChatOptions): Promise<number[]>;
  /** A chat's token count: a messages array, or a Chat Completions request (functions / tools counted). */
  countChat(input: readonly ChatMessage[] | ChatRequest, options?: ChatOptions & { perMessage?: false }): Promise<number>;
  /** What each message adds, then the reply priming. */
  countChat(input: readonly ChatMessage[], options: ChatOptions & { perMessage: true }): Promise<number[]>;
  /** A request's count with its parts and what is not counted (anytok.chat.request_report). */
  countChat(input: ChatRequest | ResponsesRequest, options: ChatOptions & RequestCountOptions & { report: true }): Promise<ChatRequestReport>;
  /**
   * A chat rendered by the tokenizer_config.json's Jinja chat template (jinja2's sandbox, as
   * transformers' `apply_chat_template`): its ids.  A template that raises rejects with its own
   * message.  The first call fetches jinja2 (~80 kB).
   */
  applyChatTemplate(messages: readonly TemplateMessage[], options?: ChatTemplateOptions & { tokenize?: true; perMessage?: false }): Promise<number[]>;
  /** With `tokenize: false`: the prompt's text. */
  applyChatTemplate(messages: readonly TemplateMessage[], options: ChatTemplateOptions & { tokenize: false; perMessage?: false }): Promise<string>;
  /** With `perMessage: true`: what each message adds, then the generation prompt's share. */
  applyChatTemplate(messages: readonly TemplateMessage[], options: ChatTemplateOptions & { perMessage: true }): Promise<number[]>;
  /**
   * The tokens of text as pieces of it (for showing how text is split).  Exact for encodings,
   * and for Hugging Face and SentencePiece tokenizers whenever their tokens spell the text
   * (byte-level BPE, byte fallback); where their normalizer changed the text (lowercasing,
   * accents, ...) the pieces are an alignment for display only.  A token that stands for no
   * text (a BOS the tokenizer adds) joins the next piece.  The ids are always `encode`'s.
   */
  tokenize(text: string, options?: EncodeOptions): Promise<Piece[]>;
  /**
   * Text of the ids; invalid UTF-8 becomes U+FFFD unless `errors: "strict"` (encodings only;
   * other tokenizers decode as their own library does).
   */
  decode(ids: ArrayLike<number>, options?: { errors?: "replace" | "strict" | "ignore" }): Promise<string>;
  /**
   * Each token's own bytes, as `constrain` matches them (a byte token `<0xE5>` is that byte, a
   * SentencePiece piece its text with a space for U+2581), or, for a special token (end of
   * sequence, control tokens), its name.  A token holding part of a character's UTF-8 bytes is
   * shown by the demo as those bytes.
   */
  tokenBytes(ids: ArrayLike<number>): Promise<Array<Uint8Array | string>>;
  /** This tokenizer as an anytok `.atok` file, e.g. a tokenizer.json converted for download. */
  toAtok(): Promise<Uint8Array>;
  /** A token-mask matcher for constrained generation over this tokenizer. */
  constrain(spec: ConstrainSpec, options?: { eosToken?: number }): Promise<Matcher>;
  /**
   * The token count if it is at most `limit`, else null (without encoding the rest).
   * Present when the loaded anytok has `count_till_limit` (every tokenizer kind).
   */
  countTillLimit?: (text: string, limit: number) => Promise<number | null>;
  /**
   * Text cut into consecutive chunks of at most `maxTokens` tokens each.
   * Present when the loaded anytok has `chunks` (every tokenizer kind).
   */
  chunks?: (text: string, maxTokens: number, options?: { overlap?: number }) => Promise<string[]>;
  /**
   * `[head, rest]`: the longest start of text with at most `maxTokens` tokens, and the rest.
   * Present when the loaded anytok has `split_by_tokens` (every tokenizer kind).
   */
  splitByTokens?: (text: string, maxTokens: number) => Promise<[string, string]>;
}

export default AnyTok;
