import type { ToolDefinition } from '../contracts/agent-adapter.js'
import type { AnyMessage } from '../contracts/messages.js'

/** What a tool's `execute` receives beside its input. */
export interface ToolContext {
  sessionId: string
  /** The id of the tool call being answered. */
  toolCallId: string
  /** Aborts when the send is aborted; long-running tools should honour it. */
  signal: AbortSignal
  /** The conversation so far (read-only). */
  messages: readonly AnyMessage[]
}

/**
 * A tool the model may call: a plain object. `execute` may return a string (a text block), a
 * `ContentBlock[]` (used as is) or any other JSON value (serialised to a text block); a throw
 * becomes a tool result with `isError: true`, never a failed send.
 */
export interface Tool<Input = unknown> extends ToolDefinition {
  execute(input: Input, context: ToolContext): unknown
}
