import type { AnyMessage, ContentBlock, StopReason, TokenUsage } from '../contracts/messages.js'
import type { AgentError } from '../errors/agent-error.js'
import type { PendingToolCall } from '../tools/tool.js'
import type { SessionState } from '../contracts/session-state.js'

/** What a `send` resolves to. */
export interface SendResult<Output = unknown> {
  /** The messages this send persisted, in order (user message first). */
  messages: AnyMessage[]
  /** The final agent text. */
  text: string
  /** This send's usage, all model responses added up. */
  usage: TokenUsage
  stopReason: StopReason | undefined
  /** Present when the send stopped to wait for the application (state `waiting_input`, DESIGN §10.1). */
  pending?: PendingToolCall[]
  /** The structured output (`SendOptions.output`): parsed and validated. */
  output?: Output
}

/** The events of a session, as `stream()` yields them and `subscribe` listeners receive them. */
export type SessionEvent =
  | { type: 'state'; state: SessionState; previous: SessionState }
  | { type: 'text-delta'; text: string }
  | { type: 'thinking-delta'; text: string }
  | { type: 'tool-call'; id: string; name: string; input: unknown }
  | { type: 'tool-result'; toolUseId: string; content: string | ContentBlock[]; isError?: boolean }
  /** A message was persisted (accepted by the write queue; durable per the durability setting). */
  | { type: 'message'; message: AnyMessage }
  | { type: 'usage'; usage: TokenUsage }
  /** A retryable error; the request is tried again after `delayMs`. `attempt` is 1-based. */
  | { type: 'retry'; attempt: number; delayMs: number; error: AgentError }
  | { type: 'retries-exhausted'; error: AgentError }
  /** A write failed for good (after the write queue's own retries). */
  | { type: 'persist-error'; error: AgentError }
  | { type: 'error'; error: AgentError }
  | { type: 'done'; result: SendResult }
  /** The send stopped: these calls need an approval or a client tool's answer (state `waiting_input`). */
  | { type: 'input-required'; pending: PendingToolCall[] }
  /** A profile handed the conversation to another (`transfer_to_<to>`); the same send goes on with `to`. */
  | { type: 'handoff'; from: string; to: string }
  /** An event of a child session run by an agent tool (never repeated as the parent's own). */
  | {
      type: 'subagent'
      sessionId: string
      agent: string
      /** The agent-tool call of the parent that runs this child (its `parentToolUseId`). */
      toolUseId: string
      event: SessionEvent
    }
  /**
   * Before each model request of a send: `step` counts from 1; `agent` is the profile
   * (`'default'`), `provider` the `getName()` of the adapter the request goes to.
   */
  | { type: 'step-start'; step: number; agent: string; model: string; provider: string }
  /** After each model request, also a failed one (`stopReason` `'error'` or `'aborted'`, no usage). */
  | { type: 'step-finish'; step: number; usage?: TokenUsage; stopReason: StopReason | undefined }
  /**
   * The conversation was compacted (DESIGN §10.4): `message` is the persisted summary, a `system`
   * message with `compaction: { throughSeq }` and the summariser's `usage` (it is also shown by a
   * `message` event just before).
   */
  | { type: 'compaction'; message: AnyMessage }
  /**
   * An automatic compaction failed (the summariser's error): the send goes on uncompacted, with
   * the whole history, and tries no other compaction; the next send tries again.
   */
  | { type: 'compaction-error'; error: AgentError }

/** A listener of {@link SessionEvent}s. */
export type SessionListener = (event: SessionEvent) => void
