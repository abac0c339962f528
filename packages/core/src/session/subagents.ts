import type { TokenUsage, ToolResultBlock, ToolUseBlock } from '../contracts/messages.js'
import { textOf } from '../util/content-text.js'
import { isAgentError } from '../errors/agent-error.js'
import { errorResult } from '../tools/run-tools.js'
import type { PendingToolCall } from '../tools/tool.js'
import type { PendingAnswer } from './approvals.js'
import type { Session } from './session.js'
import type { SessionEvent } from './session-events.js'

/** What a child session is made from. */
export interface ChildInit {
  id: string
  parentSessionId: string
  parentToolUseId: string
  /** The profile the child runs. */
  agent: string
}

/**
 * Where a session gets its child sessions: the agent's session manager, which persists them like
 * any session (with `parentSessionId` and `parentToolUseId`) and keeps one object per id.
 */
export interface ChildSessions {
  /** The child with this id, loaded or created. */
  open(init: ChildInit): Promise<Session>
  /** The child with this id if it exists. */
  find(id: string): Promise<Session | undefined>
}

/** What running an agent tool's call produced: its result, or the child's calls it waits on. */
export type ChildOutcome =
  | { kind: 'done'; result: ToolResultBlock; usage?: TokenUsage }
  | { kind: 'waiting'; pending: PendingToolCall[]; usage?: TokenUsage }

/**
 * The id of the child session that answers `toolUseId` of session `parentId`: derived, so the
 * child is found again after a restart without another index.
 */
export function childSessionId(parentId: string, toolUseId: string): string {
  return `${parentId}/${toolUseId}`
}

/** The calls a waiting child holds its parent's batch on, or `[]`. */
export async function childPending(
  children: ChildSessions,
  parentId: string,
  call: ToolUseBlock,
): Promise<PendingToolCall[]> {
  const child = await children.find(childSessionId(parentId, call.id))
  return child !== undefined && child.state === 'waiting_input' ? child.getPending() : []
}

/**
 * Runs (or resumes) the child session of one agent-tool call. Idempotent across restarts: a child
 * that already finished gives its final text again without running; a waiting child gets the
 * answers meant for it, or keeps waiting. A failure becomes an `isError` result, never a failed parent.
 */
export async function runChild(
  call: ToolUseBlock,
  profile: string,
  context: {
    sessionId: string
    signal: AbortSignal
    children: ChildSessions
    emit(event: SessionEvent): void
    answers?: ReadonlyMap<string, PendingAnswer>
  },
): Promise<ChildOutcome> {
  const task = (call.input as { task?: unknown } | null)?.task
  if (typeof task !== 'string' || task.trim() === '') {
    return {
      kind: 'done',
      result: errorResult(call.id, `${call.name} needs { "task": "…" } with the task as text.`),
    }
  }
  let child: Session
  try {
    child = await context.children.open({
      id: childSessionId(context.sessionId, call.id),
      parentSessionId: context.sessionId,
      parentToolUseId: call.id,
      agent: profile,
    })
  } catch (error) {
    return {
      kind: 'done',
      result: errorResult(call.id, `The ${profile} agent could not start: ${messageOf(error)}`),
    }
  }
  const stopForwarding = child.subscribe((event) =>
    context.emit({ type: 'subagent', sessionId: child.id, agent: profile, event }),
  )
  const onAbort = (): void => child.abort()
  context.signal.addEventListener('abort', onAbort, { once: true })
  try {
    let send: Promise<{ text: string; usage: TokenUsage; pending?: PendingToolCall[] }>
    if (child.state === 'waiting_input') {
      const pending = await child.getPending()
      const answers = pending.map((item) => context.answers?.get(item.toolUseId))
      if (answers.some((answer) => answer === undefined)) return { kind: 'waiting', pending }
      send = child.send(answers as PendingAnswer[])
    } else if (child.state === 'idle') {
      const [last] = await child.getMessages({ limit: 1 })
      if (last?.type === 'agent') return { kind: 'done', result: textResult(call.id, textOf(last.content)) }
      send = child.send(task, { agent: profile })
    } else {
      send = child.send(task, { agent: profile })
    }
    const result = await send
    // The child's requests until it stopped count in the parent send's usage (DESIGN §10.3).
    if (result.pending !== undefined && result.pending.length > 0)
      return { kind: 'waiting', pending: result.pending, usage: result.usage }
    return { kind: 'done', result: textResult(call.id, result.text), usage: result.usage }
  } catch (error) {
    if (context.signal.aborted) throw error
    return { kind: 'done', result: errorResult(call.id, `The ${profile} agent failed: ${messageOf(error)}`) }
  } finally {
    context.signal.removeEventListener('abort', onAbort)
    stopForwarding()
  }
}

function textResult(toolUseId: string, text: string): ToolResultBlock {
  return { type: 'tool_result', toolUseId, content: [{ type: 'text', text }] }
}

function messageOf(error: unknown): string {
  if (isAgentError(error)) return `${error.message} (${error.code})`
  return error instanceof Error ? error.message : String(error)
}

/** A session the kernel can tell to give up its pending calls (a `BaseSession`). */
interface ClosableSession extends Session {
  closePending?(): Promise<void>
}

/**
 * The user wrote instead of answering: children that wait inside this batch give up their pending
 * calls too (closed as not run, state `completed`), so none is left waiting forever.
 */
export async function closeWaitingChildren(
  children: ChildSessions | undefined,
  parentId: string,
  calls: readonly ToolUseBlock[],
  isAgentTool: (call: ToolUseBlock) => boolean,
): Promise<void> {
  if (children === undefined) return
  for (const call of calls) {
    if (!isAgentTool(call)) continue
    const child: ClosableSession | undefined = await children.find(childSessionId(parentId, call.id))
    if (child?.state === 'waiting_input') await child.closePending?.()
  }
}
