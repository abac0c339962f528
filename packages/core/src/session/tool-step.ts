import type { AnyMessage, ContentBlock, ToolResultBlock, ToolUseBlock } from '../contracts/messages.js'
import { runTools } from '../tools/run-tools.js'
import type { Tool } from '../tools/tool.js'
import type { SessionEvent } from './session-events.js'

/** The tool calls of an agent message, in order. */
export function toolCallsOf(message: AnyMessage): ToolUseBlock[] {
  if (!Array.isArray(message.content)) return []
  const calls: ToolUseBlock[] = []
  for (const block of message.content) if (block.type === 'tool_use') calls.push(block)
  return calls
}

/**
 * The tool step of the send loop: runs one model response's tool calls in parallel and returns
 * their results in call order (one `tool` message per batch). Each result is shown as a
 * `tool-result` event when it is ready.
 */
export async function runToolStep(
  calls: ToolUseBlock[],
  tools: Map<string, Tool>,
  context: {
    sessionId: string
    signal: AbortSignal
    messages: readonly AnyMessage[]
    emit(event: SessionEvent): void
  },
): Promise<ToolResultBlock[]> {
  return runTools(calls, tools, {
    sessionId: context.sessionId,
    signal: context.signal,
    messages: context.messages,
    onResult: (result) => context.emit(toolResultEvent(result)),
  })
}

/** Merges tool lists; later lists win by name. */
export function mergeTools(...lists: Array<readonly Tool[] | undefined>): Map<string, Tool> {
  const tools = new Map<string, Tool>()
  for (const list of lists) for (const tool of list ?? []) tools.set(tool.name, tool)
  return tools
}

function toolResultEvent(result: ToolResultBlock): SessionEvent {
  const content: string | ContentBlock[] = result.content
  return result.isError
    ? { type: 'tool-result', toolUseId: result.toolUseId, content, isError: true }
    : { type: 'tool-result', toolUseId: result.toolUseId, content }
}
