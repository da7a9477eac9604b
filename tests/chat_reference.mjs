// Reference for tests/test_chat.py: gpt-tokenizer 4.0.0 run on a batch of cases.
//   node tests/chat_reference.mjs <gpt-tokenizer package folder>  < cases.json  > results.json
// A case is {model, op: "encode", messages} or {model, op: "count_request", request}; a result is
// {value} or {error}.  count_request uses the model's countChatCompletionTokens where the model has
// it, else gpt-tokenizer's own computeChatCompletionTokenCount with the model's ordinary counts.
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

const root = process.argv[2]
const url = (p) => pathToFileURL(`${root}/esm/${p}`).href
const { computeChatCompletionTokenCount } = await import(url('functionCalling.js'))
const cases = JSON.parse(readFileSync(0, 'utf8'))
const modules = {}
const results = []
for (const c of cases) {
  try {
    const m = (modules[c.model] ??= await import(url(`model/${c.model}.js`)))
    if (c.op === 'encode') {
      results.push({ value: m.encodeChat(c.messages) })
    } else if (m.countChatCompletionTokens) {
      results.push({ value: m.countChatCompletionTokens(c.request) })
    } else {
      const n = (t) => (t ? m.encode(t, { disallowedSpecial: new Set() }).length : 0)
      results.push({ value: computeChatCompletionTokenCount(c.request, n), computed: true })
    }
  } catch (e) {
    results.push({ error: String(e && e.message) })
  }
}
process.stdout.write(JSON.stringify(results))
