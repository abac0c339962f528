import type { AnyMessage, ContentBlock } from '../contracts/messages.js'
import type { InferSchemaOutput, StandardSchemaV1 } from '../contracts/standard-schema.js'

/** What a tool's `execute` (and a `needsApproval` function) receives beside its input. */
export interface ToolContext {
  sessionId: string
  /** The id of the tool call being answered. */
  toolCallId: string
  /** Aborts when the send is aborted; long-running tools should honour it. */
  signal: AbortSignal
  /** The conversation so far, as the session held it when the batch began: a frozen copy. */
  messages: readonly AnyMessage[]
}

/**
 * A tool the model may call: a plain object.
 *
 * `execute` gets a fresh copy of its input (its own to change) and may return a string (a text
 * block; nothing or `''`: the text "(the tool returned no output)"), an array of `text` and
 * `image` blocks (checked like user content, then copied: the tool keeps its own array) or any
 * other JSON value (serialised to a text block). A throw, or a result that is none of these (a
 * malformed or `tool_use` block, a `Map`, a cycle …), becomes a tool result with `isError: true` naming the tool — never a failed
 * send, never stored content that a provider would refuse. A tool without `execute` is a
 * **client tool**: the application answers it (a browser action, a question to the user) with a
 * `tool_result` sent through `send`. With `needsApproval`, a call waits for a `tool_approval`
 * answer before it runs (DESIGN §10.1).
 */
export interface Tool<Input = unknown> {
  name: string
  description: string
  /**
   * The tool's input: a JSON Schema object, or a Standard Schema (zod 4, valibot, arktype …) whose
   * library derives the JSON Schema (`~standard.jsonSchema`). Input is checked against it before
   * `execute`; invalid input becomes an `isError` result listing the issues, so the model can
   * correct itself.
   */
  inputSchema: Record<string, unknown> | StandardSchemaV1
  /** Runs the tool. Default is none: a client tool, answered by the application. */
  execute?(input: Input, context: ToolContext): unknown
  /**
   * Whether a call must be approved before it runs: a boolean, or a function of the call's input
   * (it should give the same answer for the same input, since pending calls are derived again
   * after a restart). Default is `false`.
   */
  needsApproval?: boolean | ApprovalCheck<Input>
}

/**
 * A `needsApproval` function. Declared as a method so that a `Tool<{ city: string }>` is still a
 * `Tool` (method parameters are checked bivariantly).
 */
export type ApprovalCheck<Input> = {
  check(input: Input, context: ToolContext): boolean | Promise<boolean>
}['check']

/** A tool call the session waits on: it needs approval, or it is a client tool. */
export interface PendingToolCall {
  toolUseId: string
  name: string
  input: unknown
  kind: 'approval' | 'client'
  /** The session whose model made the call: this session's id, or a sub-agent's. */
  sessionId: string
}

/**
 * The answer to a call that needs approval, sent through `send`/`stream` with the other answers.
 * An approved call runs (with `input` instead of the model's input when given); a denied one
 * becomes an `isError` result whose text gives `reason`.
 */
export interface ToolApproval {
  type: 'tool_approval'
  toolUseId: string
  approved: boolean
  reason?: string
  input?: unknown
}

/**
 * The answer to a client tool's call: its result, as the application produced it. `content` is a
 * non-empty string or a non-empty array of `text` and `image` blocks; anything else rejects the
 * answering send with a `ValidationError` before anything is written.
 */
export interface ToolAnswer {
  type: 'tool_result'
  toolUseId: string
  content: string | ContentBlock[]
  isError?: boolean
}

/**
 * An identity helper that infers `execute`'s input type from a Standard Schema `inputSchema`:
 * `tool({ name, description, inputSchema: z.object({ city: z.string() }), execute: ({ city }) => … })`.
 */
export function tool<Schema extends StandardSchemaV1>(
  definition: Omit<Tool<InferSchemaOutput<Schema>>, 'inputSchema'> & { inputSchema: Schema },
): Tool<InferSchemaOutput<Schema>>
export function tool<Input = unknown>(definition: Tool<Input>): Tool<Input>
export function tool(definition: Tool): Tool {
  return definition
}
