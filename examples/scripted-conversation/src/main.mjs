// A scripted conversation end to end: an agent with a tool, a ScriptedAdapter standing in for the
// model, and the InMemoryPersister. Run: pnpm --filter @agentx/example-scripted-conversation start
import assert from 'node:assert/strict'
import { createAgent, InMemoryPersister } from '@agentx/core'
import { ScriptedAdapter, textTurn, toolCallTurn, usage } from '@agentx/core/testing'

/** @type {import('@agentx/core').Tool<{ city: string }>} */
const weather = {
  name: 'get_weather',
  description: 'The current weather of a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: async ({ city }) => ({ city, sky: 'sunny', celsius: 22 }),
}

const adapter = new ScriptedAdapter([
  toolCallTurn([{ id: 'call_1', name: 'get_weather', input: { city: 'Lisbon' } }], { text: 'Let me check. ', usage: usage(40, 12) }),
  textTurn('It is sunny and 22 °C in Lisbon.', { usage: usage(70, 11) }),
  textTurn('You are welcome!', { usage: usage(90, 4) }),
])
const persister = new InMemoryPersister()
const agent = createAgent({ model: 'demo-model', tools: [weather] }, { adapter, persister })
await agent.initialize()

const session = await agent.createSession({ systemPrompt: 'You are a weather assistant.' })
session.subscribe((event) => {
  if (event.type === 'text-delta') process.stdout.write(event.text)
  if (event.type === 'tool-call') process.stdout.write(`\n[tool ${event.name}(${JSON.stringify(event.input)})]\n`)
})

const first = await session.send('What is the weather in Lisbon?')
process.stdout.write('\n')
const second = await session.send('Thanks!')
process.stdout.write('\n')
await agent.close()

const stored = await persister.getMessages(session.id)
console.log(`\n${stored.length} messages persisted:`)
for (const message of stored) console.log(`  #${message.seq} ${message.type}: ${JSON.stringify(message.content).slice(0, 80)}`)
console.log('session usage:', session.getTokenUsage())

assert.equal(first.text, 'It is sunny and 22 °C in Lisbon.')
assert.equal(second.text, 'You are welcome!')
assert.deepEqual(stored.map((m) => m.type), ['user', 'agent', 'tool', 'agent', 'user', 'agent'])
assert.deepEqual(session.getTokenUsage(), usage(200, 27))
console.log('ok: the scripted conversation ran end to end')
