import type { AdapterMessage } from '@agentx/core'
import { createAgent, InMemoryPersister } from '@agentx/core'
import { ScriptedAdapter } from '@agentx/core/testing'
import { describe, expect, it } from 'vitest'
import { ClaudeSession } from './claude-session.js'
import { ClaudeSessionFactory } from './claude-session-factory.js'

describe('ClaudeSessionFactory / ClaudeSession', () => {
  it('makes ClaudeSessions that store the response metadata of each reply as metadata.claude', async () => {
    const withMetadata = {
      type: 'message',
      content: [{ type: 'text', text: 'Hi' }],
      stopReason: 'other',
      providerMetadata: { claude: { messageId: 'msg_1', model: 'claude-x', stopReason: 'pause_turn' } },
    } as AdapterMessage
    const plain: AdapterMessage = {
      type: 'message',
      content: [{ type: 'text', text: 'Again' }],
      stopReason: 'end_turn',
    }
    const persister = new InMemoryPersister()
    const agent = createAgent(
      { model: 'claude-x' },
      {
        adapter: new ScriptedAdapter([[{ type: 'text-delta', text: 'Hi' }, withMetadata], [plain]]),
        persister,
        sessionFactory: new ClaudeSessionFactory(),
      },
    )
    await agent.initialize()
    const session = await agent.createSession({})
    expect(session).toBeInstanceOf(ClaudeSession)
    await session.send('Hello')
    await session.send('More')
    await agent.close()
    const stored = await persister.getMessages(session.id)
    const agentMessages = stored.filter((message) => message.type === 'agent')
    expect(agentMessages.map((message) => message.metadata)).toEqual([
      { claude: { messageId: 'msg_1', model: 'claude-x', stopReason: 'pause_turn' } },
      undefined,
    ])
    expect(agentMessages[0]?.stopReason).toBe('other')
    expect(
      stored.filter((message) => message.type === 'user').every((message) => message.metadata === undefined),
    ).toBe(true)
  })
})
