import { createAgent, InMemoryPersister, isAdapterError } from '@agentx/core'
import { ScriptedAdapter, textTurn, toolCallTurn } from '@agentx/core/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { PIXEL_PNG, stdioServer } from '../test/test-servers.js'
import { connectMcp, type McpConnection } from './index.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined)
})

function connect(): McpConnection {
  const mcp = connectMcp(stdioServer(), { namePrefix: 'docs_' })
  cleanups.push(() => mcp.close())
  return mcp
}

describe('an agent with MCP tools', () => {
  it('calls them in its tool loop and persists their results, errors as isError', async () => {
    const mcp = connect()
    const adapter = new ScriptedAdapter([
      toolCallTurn([
        { id: 'c1', name: 'docs_echo', input: { text: 'from the model' } },
        { id: 'c2', name: 'docs_fail', input: {} },
        { id: 'c3', name: 'docs_image', input: {} },
      ]),
      textTurn('All done.'),
    ])
    const persister = new InMemoryPersister()
    const agent = createAgent({ model: 'model-a', tools: await mcp.tools() }, { adapter, persister })
    cleanups.push(() => agent.close())
    const session = await agent.createSession()
    const result = await session.send('Use the tools.')
    expect(result.text).toBe('All done.')
    await session.flush()

    const stored = await persister.getMessages(session.id)
    expect(stored.map((message) => message.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(stored[2]!.content).toEqual([
      { type: 'tool_result', toolUseId: 'c1', content: [{ type: 'text', text: 'from the model' }] },
      {
        type: 'tool_result',
        toolUseId: 'c2',
        content: [{ type: 'text', text: 'The file does not exist.' }],
        isError: true,
      },
      {
        type: 'tool_result',
        toolUseId: 'c3',
        content: [
          { type: 'image', mediaType: 'image/png', data: PIXEL_PNG },
          { type: 'text', text: 'a single pixel' },
        ],
      },
    ])
    // The model was offered the server's tools with the server's schemas, and got the results back.
    const offered = adapter.calls[0]!.options.tools!.find((each) => each.name === 'docs_echo')
    expect(offered).toEqual({
      name: 'docs_echo',
      description: 'Returns its text.',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string', description: 'What to echo.' } },
        required: ['text'],
        additionalProperties: false,
      },
    })
    expect(adapter.calls[1]!.prompt).toEqual(stored[2]!.content)
  })

  it('cancels the running MCP call when the send is aborted', async () => {
    const mcp = connect()
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'c1', name: 'docs_slow', input: { ms: 30_000 } }]),
    ])
    const persister = new InMemoryPersister()
    const tools = await mcp.tools()
    const agent = createAgent({ model: 'model-a', tools }, { adapter, persister })
    cleanups.push(() => agent.close())
    const session = await agent.createSession()
    const status = tools.find((each) => each.name === 'docs_status')!
    const calls = async () =>
      JSON.parse(
        (
          (await status.execute!(
            {},
            { sessionId: 's', toolCallId: 't', signal: new AbortController().signal, messages: [] },
          )) as Array<{ text: string }>
        )[0]!.text,
      ) as { cancelled: number; calls: number }
    const before = await calls()
    const sent = session.send('Wait for it.')
    // Wait until the server is running the slow call (the status call counts too).
    for (let seen = before.calls; seen < before.calls + 2; ) seen = (await calls()).calls
    const started = Date.now()
    session.abort()
    const error = await sent.catch((caught: unknown) => caught)
    expect(isAdapterError(error) && error.kind).toBe('aborted')
    expect(Date.now() - started).toBeLessThan(2000)
    let after = await calls()
    for (let i = 0; i < 50 && after.cancelled === before.cancelled; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      after = await calls()
    }
    expect(after.cancelled).toBe(before.cancelled + 1)
    expect(session.state).toBe('aborted')
  })
})
