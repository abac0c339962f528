import type { AdapterMessage, AnyMessage } from '@agentx/core'
import { BaseSession } from '@agentx/core'
import type { ClaudeMessageEvent, ClaudeResponseMetadata } from './map-claude-stream.js'

/**
 * A {@link BaseSession} for Claude: the kernel's send flow unchanged, plus Claude's response
 * metadata (message id, exact model, raw `stop_reason`, stop sequence, stop details) stored on
 * every agent message as `metadata.claude`.
 *
 * Made by {@link ClaudeSessionFactory}. It shows the extension pattern with a real provider:
 * `extractSessionId` sees every adapter message (it keeps the default, since the Messages API is
 * stateless and has no provider session id), and `transformMessage` adjusts the message before it
 * is persisted.
 */
export class ClaudeSession extends BaseSession {
  #response: ClaudeResponseMetadata | undefined

  /** Remembers the metadata of the response's `message` event; returns what the default returns (none for Claude). */
  protected override extractSessionId(message: AdapterMessage): string | undefined {
    if (message.type === 'message') {
      const metadata = (message as ClaudeMessageEvent).providerMetadata?.claude
      this.#response = metadata === undefined ? undefined : { ...metadata }
    }
    return super.extractSessionId(message)
  }

  /** Adds `metadata.claude` (the last response's {@link ClaudeResponseMetadata}) to an agent message. */
  protected override transformMessage(message: AnyMessage): AnyMessage {
    const response = this.#response
    this.#response = undefined
    if (message.type !== 'agent' || response === undefined || Object.keys(response).length === 0)
      return super.transformMessage(message)
    return super.transformMessage({
      ...message,
      metadata: { ...message.metadata, claude: structuredClone(response) },
    })
  }
}
