import type { AnyMessage, ContentBlock, ToolResultBlock, ToolUseBlock } from '../contracts/messages.js'
import { contentProblem } from '../persistence/shapes.js'
import { checkAgainst } from './schema.js'
import type { Tool } from './tool.js'

const BLOCK_TYPES: ReadonlySet<unknown> = new Set(['text', 'image', 'thinking', 'tool_use', 'tool_result'])

/** Runs the tool calls of one model response in parallel; each becomes one result, in call order. */
export async function runTools(
  calls: ToolUseBlock[],
  tools: Map<string, Tool>,
  context: {
    sessionId: string
    signal: AbortSignal
    messages: readonly AnyMessage[]
    onResult?: (result: ToolResultBlock) => void
  },
): Promise<ToolResultBlock[]> {
  return Promise.all(
    calls.map(async (call) => {
      const result = await runTool(call, tools.get(call.name), context)
      context.onResult?.(result)
      return result
    }),
  )
}

async function runTool(
  call: ToolUseBlock,
  tool: Tool | undefined,
  context: { sessionId: string; signal: AbortSignal; messages: readonly AnyMessage[] },
): Promise<ToolResultBlock> {
  if (!tool) {
    return errorResult(call.id, `Unknown tool: ${call.name}`)
  }
  if (!tool.execute) {
    return errorResult(
      call.id,
      `${call.name} is a client tool: the application answers it with a tool_result.`,
    )
  }
  const checked = await checkAgainst(tool.inputSchema, call.input).catch((error: unknown) => ({
    ok: false as const,
    issues: [error instanceof Error ? error.message : String(error)],
  }))
  if (!checked.ok) {
    return errorResult(
      call.id,
      `Invalid input for ${call.name}; nothing was run. Fix these and call it again:\n- ${checked.issues.join('\n- ')}`,
    )
  }
  try {
    const output = await tool.execute(checked.value, {
      sessionId: context.sessionId,
      toolCallId: call.id,
      signal: context.signal,
      messages: context.messages,
    })
    return { type: 'tool_result', toolUseId: call.id, content: toResultContent(output) }
  } catch (error) {
    const text = error instanceof Error ? error.message || error.name : String(error)
    return { type: 'tool_result', toolUseId: call.id, content: [{ type: 'text', text }], isError: true }
  }
}

/** A tool result with `isError: true` and one text block. */
export function errorResult(toolUseId: string, text: string): ToolResultBlock {
  return { type: 'tool_result', toolUseId, content: [{ type: 'text', text }], isError: true }
}

/** A string is a text block, content blocks are kept, any other value is JSON text. */
export function toResultContent(output: unknown): ContentBlock[] {
  if (typeof output === 'string') return [{ type: 'text', text: output }]
  if (isBlockList(output)) return output
  let text: string
  try {
    text = JSON.stringify(output) ?? ''
  } catch {
    text = String(output)
  }
  return [{ type: 'text', text }]
}

/** Content blocks of the five kinds, each with its fields: stored as they are. Anything else is JSON text. */
function isBlockList(value: unknown): value is ContentBlock[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((block) => BLOCK_TYPES.has((block as { type?: unknown } | null)?.type)) &&
    contentProblem(value, 'output') === undefined
  )
}
