// Structured output and a typed tool with zod, end to end through the scripted adapter (no key,
// no network). Run: pnpm --filter @agentx/example-structured-output start
import assert from 'node:assert/strict'
import { createAgent, InMemoryPersister, tool } from '@agentx/core'
import { ScriptedAdapter, textTurn, toolCallTurn } from '@agentx/core/testing'
import { z } from 'zod'

// The record to extract. The adapter receives its JSON Schema (zod derives it through Standard
// JSON Schema) and uses the provider's native structured output; the kernel parses and validates.
const Contact = z.object({
  name: z.string(),
  email: z.email(),
  company: z.string().optional(),
  topics: z.array(z.string()).max(5),
})

// A typed tool: `execute` gets `{ domain: string }`; bad input never reaches it.
const lookupCompany = tool({
  name: 'lookup_company',
  description: 'The company that owns an email domain',
  inputSchema: z.object({ domain: z.string().min(3) }),
  execute: ({ domain }) => (domain === 'example.org' ? 'Example Org' : 'unknown'),
})

const adapter = new ScriptedAdapter([
  // The model first gets the input wrong: the kernel answers with the issues, not with a crash.
  toolCallTurn([{ id: 'call_1', name: 'lookup_company', input: { domain: 42 } }]),
  toolCallTurn([{ id: 'call_2', name: 'lookup_company', input: { domain: 'example.org' } }]),
  textTurn('{"name":"Ada Lovelace","email":"ada@example.org","company":"Example Org","topics":["engines","poetry"]}'),
  textTurn('Ada, ada@example.org'),
])
const persister = new InMemoryPersister()
const agent = createAgent({ model: 'demo-model', tools: [lookupCompany] }, { adapter, persister })
const session = await agent.createSession()

const email = 'Hi, Ada Lovelace here (ada@example.org). Let us talk about engines and poetry.'
const { output } = await session.send(`Extract the contact from this email:\n${email}`, {
  output: { schema: Contact, name: 'contact' },
})
console.log('extracted:', output)
assert.deepEqual(output, {
  name: 'Ada Lovelace',
  email: 'ada@example.org',
  company: 'Example Org',
  topics: ['engines', 'poetry'],
})

// What the model was told: a JSON Schema for the output and for the tool, and the first, invalid
// tool input came back as an isError result listing the issues.
assert.equal(adapter.calls[0].options.output.name, 'contact')
assert.equal(adapter.calls[0].options.output.schema.type, 'object')
assert.deepEqual(adapter.calls[0].options.tools[0].inputSchema.required, ['domain'])
const firstResult = adapter.calls[1].prompt[0]
assert.equal(firstResult.isError, true)
assert.match(JSON.stringify(firstResult.content), /domain/)

// Output that does not match is an error with code OUTPUT_INVALID; the reply stays stored.
const failed = await session.send('Again, please.', { output: { schema: Contact } }).catch((error) => error)
assert.equal(failed.code, 'OUTPUT_INVALID')
console.log('invalid output rejected:', failed.code)
await agent.close()
const stored = await persister.getMessages(session.id)
assert.equal(stored.at(-1).type, 'agent')
console.log(`${stored.length} messages stored; the invalid reply is the last one.`)
