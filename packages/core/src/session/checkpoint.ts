import type { AnyMessage, ContentBlock, StopReason, TokenUsage, ToolUseBlock } from '../contracts/messages.js'
import { TextBuffer } from '../util/text-buffer.js'
import { uuidv7 } from '../util/uuid-v7.js'

/**
 * A model response while it streams: what it said so far, under the id and seq its final message
 * will have. Kept (as an `incomplete` message) when the response fails or is aborted, and saved
 * now and then while it streams (a checkpoint) so a crash loses at most one interval of text.
 */
export class PartialResponse {
  readonly id: string = uuidv7()
  readonly seq: number
  /** The reply's text so far (appended delta by delta). */
  readonly text: TextBuffer = new TextBuffer()
  /** The reply's thinking so far. */
  readonly thinking: TextBuffer = new TextBuffer()
  readonly toolCalls: ToolUseBlock[] = []
  /** The ids of `toolCalls` (see `distinctToolId`). */
  readonly toolIds: Set<string> = new Set()
  /** The usage the adapter reported so far (summed over its `usage` events). */
  usage: TokenUsage | undefined
  /** Whether any event arrived (a retry is only allowed before the first one). */
  yielded = false
  /** Whether a checkpoint of it was queued. */
  checkpointed = false
  /** The text length at the last checkpoint. */
  #savedLength = 0
  #lastCheckpoint = Date.now()

  constructor(seq: number) {
    this.seq = seq
  }

  /** Whether it has anything worth keeping. */
  get isEmpty(): boolean {
    return (
      !this.checkpointed &&
      this.text.length === 0 &&
      this.thinking.length === 0 &&
      this.toolCalls.length === 0
    )
  }

  /** The content so far: thinking, text, then tool calls. */
  content(): ContentBlock[] {
    const content: ContentBlock[] = []
    if (this.thinking.length > 0) content.push({ type: 'thinking', text: this.thinking.toString() })
    if (this.text.length > 0) content.push({ type: 'text', text: this.text.toString() })
    for (const call of this.toolCalls) content.push(call)
    return content
  }

  /**
   * Whether a checkpoint is due: `intervalMs` passed since the last one and new text arrived.
   * A negative interval never checkpoints.
   */
  checkpointDue(intervalMs: number, now: number = Date.now()): boolean {
    return (
      intervalMs >= 0 && this.text.length !== this.#savedLength && now - this.#lastCheckpoint >= intervalMs
    )
  }

  /** Milliseconds until the next checkpoint is due (0 when it is), or `undefined` when none will be. */
  msUntilCheckpoint(intervalMs: number, now: number = Date.now()): number | undefined {
    if (intervalMs < 0 || this.text.length === this.#savedLength) return undefined
    return Math.max(0, this.#lastCheckpoint + intervalMs - now)
  }

  /** The checkpoint message (`incomplete: true`), and records that it was taken. */
  checkpoint(sessionId: string): AnyMessage {
    this.#savedLength = this.text.length
    this.#lastCheckpoint = Date.now()
    this.checkpointed = true
    const message = this.toMessage(sessionId, this.content())
    message.incomplete = true
    return message
  }

  /** A message of this response with the given content. */
  toMessage(sessionId: string, content: ContentBlock[], stopReason?: StopReason): AnyMessage {
    const message: AnyMessage = {
      id: this.id,
      sessionId,
      seq: this.seq,
      type: 'agent',
      content,
      timestamp: new Date().toISOString(),
    }
    if (stopReason !== undefined) message.stopReason = stopReason
    return message
  }
}
