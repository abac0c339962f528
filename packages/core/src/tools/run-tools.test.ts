// What a tool's execute() returns and receives (DESIGN §3 tools, §10.5): only valid tool-result
// content is stored, anything else is an isError result naming the tool; the application's own
// objects are copied, never frozen.
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { ContentBlock, ToolResultBlock } from '../contracts/messages.js'
import { ValidationError } from '../errors/validation-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import type { SessionEvent } from '../session/session-events.js'
import { validateContent } from '../session/validate-input.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import { toResultContent } from './run-tools.js'
import type { Tool } from './tool.js'

const PNG = 'iVBORw0KGgo='

/** Runs one batch: every tool of `returns` called once (call id = tool name), then a final reply. */
async function runBatch(returns: Record<string, () => unknown>) {
  const tools: Tool[] = Object.entries(returns).map(([name, execute]) => ({
    name,
    description: name,
    inputSchema: { type: 'object' },
    execute,
  }))
  const persister = new InMemoryPersister()
  const calls = Object.keys(returns).map((name) => ({ id: name, name, input: {} }))
  const adapter = new ScriptedAdapter([toolCallTurn(calls), textTurn('done'), textTurn('again')])
  const agent = createAgent({ tools, durability: 'sync' }, { adapter, persister })
  const session = await agent.createSession()
  const events: SessionEvent[] = []
  session.subscribe((event) => events.push(event))
  await session.send('go')
  const stored = await persister.getMessages(session.id)
  const toolMessage = stored.find((message) => message.type === 'tool')!
  const results = new Map(
    (toolMessage.content as ToolResultBlock[]).map((result) => [result.toolUseId, result]),
  )
  const resultEvents = new Map(
    events.flatMap((event) => (event.type === 'tool-result' ? [[event.toolUseId, event] as const] : [])),
  )
  return { agent, session, adapter, persister, results, resultEvents }
}

const textOf = (result: ToolResultBlock | undefined): string => JSON.stringify(result?.content)

/** Every stored result holds content a caller could have sent: a non-empty string or text/image blocks. */
function expectValidResultContent(results: Map<string, ToolResultBlock>): void {
  for (const result of results.values()) expect(() => validateContent(result.content)).not.toThrow()
}

describe('tool output: only valid tool-result content is stored', () => {
  it('an image block without data or url becomes an isError result naming the tool, and the session goes on', async () => {
    const { agent, session, adapter, results } = await runBatch({
      shot: () => [{ type: 'image', mediaType: 'image/png' }],
    })
    const result = results.get('shot')!
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain('shot')
    expect(textOf(result)).toMatch(/data or a url/)
    expect(textOf(result)).not.toContain('"type":"image"')
    expectValidResultContent(results)
    expect(session.state).toBe('idle')
    expect((await session.send('next')).text).toBe('again')
    expect(adapter.calls[1]!.prompt).toEqual([result])
    await agent.close()
  })

  it('tool_use, thinking and tool_result blocks from a tool become isError results; nothing of them is stored', async () => {
    const { agent, results } = await runBatch({
      use: () => [{ type: 'tool_use', id: 'zz', name: 'x', input: {} }],
      think: () => [{ type: 'thinking', text: 'hmm' }],
      nested: () => [{ type: 'tool_result', toolUseId: 'q', content: 'x' }],
      emptyText: () => [{ type: 'text', text: '' }],
      badMediaType: () => [{ type: 'image', mediaType: 'text/html', data: PNG }],
    })
    for (const name of ['use', 'think', 'nested', 'emptyText', 'badMediaType']) {
      const result = results.get(name)!
      expect(result.isError, name).toBe(true)
      expect(textOf(result), name).toContain(name)
    }
    expect(textOf(results.get('use'))).not.toContain('zz')
    expectValidResultContent(results)
    await agent.close()
  })

  it('well-formed text and image blocks are kept, providerMetadata included', async () => {
    const blocks: ContentBlock[] = [
      { type: 'text', text: 'a screenshot', providerMetadata: { claude: { cache: true } } },
      { type: 'image', mediaType: 'image/png', data: PNG },
      { type: 'image', mediaType: 'image/jpeg', url: 'https://example.com/a.jpg' },
    ]
    const { agent, results } = await runBatch({ shot: () => blocks })
    expect(results.get('shot')).toEqual({ type: 'tool_result', toolUseId: 'shot', content: blocks })
    await agent.close()
  })

  it('values JSON cannot hold become isError results naming the tool instead of "{}" or empty text', async () => {
    const circular: Record<string, unknown> = { a: 1 }
    circular.self = circular
    const returns: Record<string, () => unknown> = {
      map: () => new Map([[1, 2]]),
      set: () => ({ tags: new Set(['a']) }),
      circular: () => circular,
      bigint: () => 10n,
      func: () => () => 1,
      symbol: () => Symbol('s'),
      notANumber: () => Number.NaN,
      nestedFunction: () => ({ y: [1, () => 1] }),
      error: () => new Error('boom'),
    }
    const { agent, results, resultEvents } = await runBatch(returns)
    for (const name of Object.keys(returns)) {
      const result = results.get(name)!
      expect(result.isError, name).toBe(true)
      expect(textOf(result), name).toContain(name)
      // The event shows what is stored.
      expect(resultEvents.get(name)).toEqual({
        type: 'tool-result',
        toolUseId: name,
        content: result.content,
        isError: true,
      })
    }
    expect(textOf(results.get('map'))).toMatch(/Map/)
    expect(textOf(results.get('circular'))).toMatch(/cycle/)
    expectValidResultContent(results)
    await agent.close()
  })

  it('a tool that returns nothing (undefined or an empty string) ran fine: a non-empty result, not an error', async () => {
    const { agent, results } = await runBatch({ nothing: () => undefined, emptyString: () => '' })
    for (const name of ['nothing', 'emptyString']) {
      expect(results.get(name)).toEqual({
        type: 'tool_result',
        toolUseId: name,
        content: [{ type: 'text', text: '(the tool returned no output)' }],
      })
    }
    expectValidResultContent(results)
    await agent.close()
  })

  it('JSON values, records that only look like blocks included, are still serialised to one text block', async () => {
    const { agent, results } = await runBatch({
      nul: () => null,
      num: () => 42,
      list: () => [],
      records: () => [{ type: 'user', name: 'Ada' }],
      files: () => [{ type: 'image', path: 'a.png' }],
      object: () => ({ x: undefined, when: new Date(0), n: -0 }),
      text: () => 'plain',
    })
    const text = (name: string) => results.get(name)!.content
    expect(text('nul')).toEqual([{ type: 'text', text: 'null' }])
    expect(text('num')).toEqual([{ type: 'text', text: '42' }])
    expect(text('list')).toEqual([{ type: 'text', text: '[]' }])
    expect(text('records')).toEqual([{ type: 'text', text: '[{"type":"user","name":"Ada"}]' }])
    expect(text('files')).toEqual([{ type: 'text', text: '[{"type":"image","path":"a.png"}]' }])
    expect(text('object')).toEqual([{ type: 'text', text: '{"when":"1970-01-01T00:00:00.000Z","n":0}' }])
    expect(text('text')).toEqual([{ type: 'text', text: 'plain' }])
    for (const result of results.values()) expect(result.isError).toBeUndefined()
    await agent.close()
  })
})

describe('tool output and input: the application keeps its own objects', () => {
  it('the blocks a tool returns are copied: the app may still change its array, the stored result does not follow', async () => {
    const help: ContentBlock[] = [{ type: 'text', text: 'static help text' }]
    const { agent, session, results } = await runBatch({ help: () => help })
    expect(Object.isFrozen(help)).toBe(false)
    expect(Object.isFrozen(help[0])).toBe(false)
    help.push({ type: 'text', text: 'more' })
    ;(help[0] as { text: string }).text = 'changed'
    expect(results.get('help')!.content).toEqual([{ type: 'text', text: 'static help text' }])
    const inMemory = (await session.getMessages()).find((message) => message.type === 'tool')!
    expect(JSON.stringify(inMemory.content)).not.toContain('changed')
    expect(JSON.stringify(inMemory.content)).not.toContain('more')
    await agent.close()
  })

  it('execute gets a fresh mutable copy of its input; the stored call keeps the model input', async () => {
    const seen: unknown[] = []
    const search: Tool<{ q: string; limit?: number; options?: { exact?: boolean } }> = {
      name: 'search',
      description: 's',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      execute: (input) => {
        input.limit ??= 10
        input.options!.exact = true
        seen.push(input)
        return `ok ${input.limit}`
      },
    }
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 's', name: 'search', input: { q: 'x', options: {} } }]),
      textTurn('fin'),
    ])
    const agent = createAgent({ tools: [search], durability: 'sync' }, { adapter, persister })
    const session = await agent.createSession()
    await session.send('go')
    const stored = await persister.getMessages(session.id)
    expect(stored[2]!.content).toEqual([
      { type: 'tool_result', toolUseId: 's', content: [{ type: 'text', text: 'ok 10' }] },
    ])
    expect(seen).toEqual([{ q: 'x', limit: 10, options: { exact: true } }])
    expect(stored[1]!.content).toEqual([
      { type: 'tool_use', id: 's', name: 'search', input: { q: 'x', options: {} } },
    ])
    await agent.close()
  })
})

describe('toResultContent', () => {
  it('returns a copy of valid blocks and throws a ValidationError for anything that is not tool-result content', () => {
    const blocks: ContentBlock[] = [{ type: 'text', text: 'hi' }]
    const content = toResultContent(blocks)
    expect(content).toEqual(blocks)
    expect(content).not.toBe(blocks)
    expect(content[0]).not.toBe(blocks[0])
    expect(() => toResultContent([{ type: 'image', mediaType: 'image/png' }])).toThrow(ValidationError)
    expect(() => toResultContent(new Map())).toThrow(ValidationError)
    expect(toResultContent(undefined)).toEqual([{ type: 'text', text: '(the tool returned no output)' }])
    expect(toResultContent('')).toEqual([{ type: 'text', text: '(the tool returned no output)' }])
    expect(toResultContent({ a: 1 })).toEqual([{ type: 'text', text: '{"a":1}' }])
  })
})
