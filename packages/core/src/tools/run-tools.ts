import type { AnyMessage, ContentBlock, ToolResultBlock, ToolUseBlock } from '../contracts/messages.js'
import { ValidationError } from '../errors/validation-error.js'
import { contentProblem } from '../persistence/shapes.js'
import { validateResultContent } from '../session/validate-input.js'
import { cloneJson } from '../persistence/json-copy.js'
import { raceAbort } from '../util/abort.js'
import { thrownText } from '../util/thrown-text.js'
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
  // Aborted before it started (e.g. while the batch's agent tools ran): not started at all.
  if (context.signal.aborted) return errorResult(call.id, NOT_RUN)
  if (!tool) {
    return errorResult(call.id, `Unknown tool: ${call.name}`)
  }
  if (!tool.execute) {
    return errorResult(
      call.id,
      `${call.name} is a client tool: the application answers it with a tool_result.`,
    )
  }
  let checked: Awaited<ReturnType<typeof checkAgainst>>
  try {
    // A check that never settles (an async refinement) must not hold the send past an abort.
    checked = await raceAbort(checkAgainst(tool.inputSchema, call.input), context.signal)
  } catch (error) {
    if (context.signal.aborted && error === context.signal.reason) return errorResult(call.id, NOT_RUN)
    checked = { ok: false, issues: [thrownText(error)] }
  }
  if (!checked.ok) {
    return errorResult(
      call.id,
      `Invalid input for ${call.name}; nothing was run. Fix these and call it again:\n- ${checked.issues.join('\n- ')}`,
    )
  }
  let output: unknown
  try {
    // `checked.value` is a fresh copy (see checkAgainst): the tool may change its input freely.
    // The abort ends the wait also for a tool that ignores its signal: the send must stop.
    output = await raceAbort(
      tool.execute(checked.value, {
        sessionId: context.sessionId,
        toolCallId: call.id,
        signal: context.signal,
        messages: context.messages,
      }),
      context.signal,
    )
  } catch (error) {
    // Aborted while it ran (its own rejection may come later, or never): say so.
    if (context.signal.aborted && error === context.signal.reason) return errorResult(call.id, STOPPED_TEXT)
    const text = thrownText(error)
    // An empty text block is no valid tool-result content either.
    return errorResult(call.id, text === '' ? `The tool '${call.name}' failed without a message.` : text)
  }
  try {
    return { type: 'tool_result', toolUseId: call.id, content: toResultContent(output) }
  } catch (error) {
    // Stored as it was, a malformed result would fail every later request of the session.
    const problem = thrownText(error)
    return errorResult(
      call.id,
      `The tool '${call.name}' ran, but its result was not kept: ${problem} A tool returns a string, an array of text and image blocks, or a JSON value.`,
    )
  }
}

const NOT_RUN = 'Not run: the send was aborted.'
export const STOPPED_TEXT = 'Stopped: the send was aborted before the tool finished.'
/** A tool result with `isError: true` and one text block. */
export function errorResult(toolUseId: string, text: string): ToolResultBlock {
  return { type: 'tool_result', toolUseId, content: [{ type: 'text', text }], isError: true }
}

/** The text of the result of a tool that returned `undefined` or an empty string. */
export const NO_OUTPUT = '(the tool returned no output)'

/**
 * The content of a tool result for what a tool's `execute` returned: a string is one text block
 * (`undefined` or an empty string: {@link NO_OUTPUT}); an array of content blocks must be valid tool-result content (well-formed `text`
 * and `image` blocks, as user content) and is copied; any other JSON value (records that only
 * look like blocks included) is its JSON text. Throws a {@link ValidationError} for anything else
 * — a malformed or `tool_use` block, or a value JSON cannot hold (a
 * `Map`, a cycle, a bigint, a function …) — instead of changing it silently. The result never
 * shares an object with `output`.
 */
export function toResultContent(output: unknown): ContentBlock[] {
  // A tool that returns nothing (a side effect only) ran fine; providers refuse an empty text block.
  if (output === undefined || output === '') return [{ type: 'text', text: NO_OUTPUT }]
  if (typeof output === 'string') {
    validateResultContent(output, 'output')
    return [{ type: 'text', text: output }]
  }
  if (isBlockList(output)) {
    validateResultContent(output, 'output')
    return cloneJson(output, 'output') as ContentBlock[]
  }
  return [{ type: 'text', text: JSON.stringify(cloneJson(output, 'output')) }]
}

/**
 * Whether `value` is meant as content blocks: a non-empty array whose items all have a block
 * `type` and that block's fields with their types (the stored shape, `contentProblem`). Records
 * that only share a field name (`[{ type: 'image', path: 'a.png' }]`, `[{ type: 'user' }]`) are a
 * JSON value; blocks that are meant as blocks must then pass the user-content rules.
 */
function isBlockList(value: unknown): value is unknown[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((block) => BLOCK_TYPES.has((block as { type?: unknown } | null)?.type)) &&
    contentProblem(value, 'output') === undefined
  )
}
