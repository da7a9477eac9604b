// Compiled (never run) by tests/test_browser.py with `tsc --noEmit --strict`: the usage the
// README shows must type-check against anytok.d.ts, and misuse must not.
import AnyTokDefault, { AnyTok, AnyTokError, type ChatRequestReport, type EncodingWithOffsets, type Piece, type TrainProgress } from "./anytok.js";

export async function usage(): Promise<void> {
  const tok: AnyTok = await AnyTok.load({ encoding: "o200k_base" });
  const n: number = await tok.count("hello world");
  const ids: number[] = await tok.encode("hello <|endoftext|>", { allowedSpecial: "all" });
  const plain: number[] = await tok.encode("hello", { disallowedSpecial: [] });
  const text: string = await tok.decode(ids, { errors: "strict" });
  const own: Array<Uint8Array | string> = await tok.tokenBytes(ids);
  const counts: number[] = await tok.countBatch(["a", "b"]);
  const pieces: Piece[] = await tok.tokenize(text);
  const exact: boolean = pieces[0].exact;
  const withOffsets: EncodingWithOffsets = await tok.encode(text, { offsets: true, allowedSpecial: "all" });
  const [start, end]: [number, number] = withOffsets.offsets[0];
  const spanText: string = text.slice(start, end);
  // @ts-expect-error with offsets: true, encode gives { ids, offsets }, not ids
  const notPlainIds: number[] = await tok.encode(text, { offsets: true });
  const names: string[] = tok.encodings();
  const all: string[] = await AnyTokDefault.encodings();
  const other = await AnyTok.load({ vocab: new Uint8Array(0), baseURL: "/static/" });
  const hf = await AnyTok.load({ url: "/models/tokenizer.json" });
  const fromFile = await AnyTok.load({ data: new ArrayBuffer(0), fileName: "tokenizer.json" });
  const parallel = await AnyTok.load({ encoding: "o200k_base", workers: 2 });
  const nWorkers: number = parallel.workers;
  const kind: "encoding" | "hf" | "sentencepiece" | "gguf" = hf.kind;
  const gguf = await AnyTok.load({ file: new Blob([]), fileName: "model.gguf" });
  const ggufIds: number[] = await gguf.encode("hello", { addSpecialTokens: true });
  void ggufIds;
  const withBos: number[] = await hf.encode("hello", { addSpecialTokens: true });
  const templated = await AnyTok.load({ data: "{}", config: { chat_template: "{{ messages[0].content }}" } });
  const hasTemplate: boolean = templated.hasChatTemplate;
  const promptIds: number[] = await templated.applyChatTemplate([{ role: "user", content: "hi" }], { addGenerationPrompt: true, enable_thinking: false });
  const promptText: string = await templated.applyChatTemplate([{ role: "user", content: "hi" }], { tokenize: false, tools: [] });
  const shares: number[] = await templated.applyChatTemplate([{ role: "user", content: "hi" }], { perMessage: true });
  // @ts-expect-error tokenize: false gives the prompt's text, not ids
  const notIds: number[] = await templated.applyChatTemplate([{ role: "user", content: "hi" }], { tokenize: false });
  void hasTemplate, promptIds, promptText, shares, notIds;
  const atok: Uint8Array = await fromFile.toAtok();
  void kind, withBos, atok, nWorkers;
  const controller = new AbortController();
  const trained = await AnyTok.train(["some text"], { vocabSize: 1000, style: "tiktoken", pattern: "cl100k_base" }, {
    signal: controller.signal,
    onProgress: (p: TrainProgress) => {
      if (p.phase === "merge") console.log(p.done, p.total, p.etaS);
      else console.log(p.mb, p.mbPerS);
    },
  });
  const trainedIds: number[] = await trained.encode("some");
  const files = trained.training?.files;
  const json: string | undefined = files?.tokenizerJson;
  const bytes: Uint8Array | undefined = files?.atok;
  void trainedIds, json, bytes;
  const spm = await AnyTok.train(["a sentence", "another one"], { kind: "unigram", vocabSize: 8000, byteFallback: true, splitDigits: true,
                                                                 characterCoverage: 0.9995, normalizationRuleName: "identity" }, {
    signal: controller.signal,
    onProgress: (p: import("./anytok.js").KindTrainProgress) => {
      if (p.phase === "read") console.log(p.chars, p.total);
      else console.log(p.step, p.finished);
    },
  });
  if (spm.training?.kind === "unigram") {
    const model: Uint8Array | undefined = spm.training.files.model;
    void model;
  }
  const wordpiece = await AnyTok.train(["some text"], { kind: "wordpiece", vocabSize: 30000, lowercase: false });
  const wpJson: string | undefined = wordpiece.training?.files.tokenizerJson;
  void wpJson;
  // @ts-expect-error kind "wordpiece" takes no SentencePiece option
  await AnyTok.train(["x"], { kind: "wordpiece", vocabSize: 100, byteFallback: true });
  // @ts-expect-error WordPiece is tokenizers' (style "hf"), not SentencePiece's
  await AnyTok.train(["x"], { kind: "wordpiece", style: "sentencepiece", vocabSize: 100 });
  const words = await AnyTok.train(["some text"], { kind: "wordlevel", vocabSize: 5000, minFrequency: 2 });
  void words.training?.files.tokenizerJson;
  // @ts-expect-error kind "wordlevel" has no continuation prefix
  await AnyTok.train(["x"], { kind: "wordlevel", vocabSize: 100, continuingSubwordPrefix: "##" });
  if (tok.countTillLimit) {
    const upTo: number | null = await tok.countTillLimit("hello", 10);
    void upTo;
  }
  if (tok.chunks) {
    const parts: string[] = await tok.chunks("long text", 100, { overlap: 10 });
    void parts;
  }
  if (tok.splitByTokens) {
    const [head, rest]: [string, string] = await tok.splitByTokens("long text", 100);
    void head, rest;
  }
  try {
    await tok.encode("<|endoftext|>");
  } catch (err) {
    if (err instanceof AnyTokError) console.log(err.pythonType, err.message);
  }
  const m = await tok.constrain({ jsonSchema: { type: "object", properties: { a: { type: "integer" } } } });
  const mask: Uint32Array = await m.mask();
  const ok: boolean = await m.consume((await m.allowed())[0]);
  const done: boolean = (await m.isAccepting()) || (await m.isStopped());
  const forcedIds: number[] = await m.forced();
  const left: number = await m.rollback(1);
  const trie: "file" | "built" = m.trie;
  await m.free();
  const digits = await tok.constrain({ regex: "[0-9]+" }, { eosToken: 199999 });
  const lark = await tok.constrain({ grammar: 'start: "yes" | "no"' });
  const gbnf = await tok.constrain({ gbnf: 'root ::= "yes" | "no"' });
  void mask, ok, done, forcedIds, left, trie, digits, lark, gbnf;
  const info = tok.runtimeInfo;
  const started: string = info.snapshot;
  const compiled: boolean = info.compiled.stdlib && info.compiled.anytok;
  void started, compiled;
  const fast = await AnyTok.load({ encoding: "o200k_base", snapshot: false, stdlibURL: null });
  void fast;
  void n, plain, counts, pieces, names, all, other;
}

export async function misuse(tok: AnyTok): Promise<void> {
  // @ts-expect-error: text must be a string
  await tok.count(42);
  // @ts-expect-error: unknown option
  await AnyTok.load({ encodnig: "o200k_base" });
  // @ts-expect-error: addSpecialTokens is a boolean
  await tok.count("text", { addSpecialTokens: "yes" });
  // @ts-expect-error: optional method, may be missing
  await tok.chunks("text", 10);
  // @ts-expect-error: vocabSize is required
  await AnyTok.train(["text"], { style: "hf" });
  // @ts-expect-error: unknown style
  await AnyTok.train(["text"], { vocabSize: 500, style: "sentencepiece" });
  // @ts-expect-error: one constraint at a time
  await tok.constrain({ regex: "a", grammar: "start: A" });
  // @ts-expect-error: one constraint at a time
  await tok.constrain({ grammar: "start: A", gbnf: "root ::= A" });
  // @ts-expect-error: a regex is text
  await tok.constrain({ regex: /a+/ });
  const chatIds: number[] = await tok.encodeChat([{ role: "user", content: "hi" }], { model: "gpt-4o" });
  const chatCount: number = await tok.countChat({ messages: [{ role: "user", content: "hi" }], tool_choice: "auto" });
  const chatParts: number[] = await tok.countChat([{ role: "user", content: "hi" }], { perMessage: true });
  const report: ChatRequestReport = await tok.countChat({ messages: [{ role: "user", content: [
    { type: "text", text: "hi" }, { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } }] }] },
    { report: true, imageSizes: { "https://example.com/a.png": [64, 64] } });
  const left: string[] = report.not_counted.map((x) => x.where);
  // @ts-expect-error: content is a string or content parts
  await tok.encodeChat([{ role: "user", content: 5 }]);
  void [chatIds, chatCount, chatParts, left];
}
