import type { SessionData } from '../contracts/agent-persister.js'
import type { TokenUsage, ToolResultBlock, ToolUseBlock } from '../contracts/messages.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { textOf } from '../util/content-text.js'
import { isAgentError } from '../errors/agent-error.js'
import { errorResult } from '../tools/run-tools.js'
import type { PendingToolCall } from '../tools/tool.js'
import type { PendingAnswer } from './approvals.js'
import type { SendOptions, Session } from './session.js'
import type { SessionEvent } from './session-events.js'
import { thrownText } from '../util/thrown-text.js'

/** What a child session is made from. */
export interface ChildInit {
  id: string
  parentSessionId: string
  parentToolUseId: string
  /** The profile the child runs. */
  agent: string
}

/** Which call a child session answers: its parent session and the tool call's id. */
export interface ChildOf {
  parentSessionId: string
  parentToolUseId: string
}

/**
 * Where a session gets its child sessions: the agent's session manager, which persists them like
 * any session (with `parentSessionId` and `parentToolUseId`) and keeps one object per id.
 */
export interface ChildSessions {
  /** The child with this id, loaded or created. */
  open(init: ChildInit): Promise<Session>
  /**
   * The session with this id when it is a child of `of`'s call; `'other'` when a session with this
   * id exists but answers something else (another parent, another call, another scope's session).
   */
  find(id: string, of: ChildOf): Promise<Session | 'other' | undefined>
}

/**
 * Marks the send by which a parent routes answers to its waiting child. A waiting child takes
 * answers only this way: answered directly, the child would go on while its parent kept waiting
 * on it for good.
 */
export const ROUTED_BY_PARENT: unique symbol = Symbol('agentx.routedByParent')

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

/** How many ids {@link locateChild} tries before it gives up. */
const MAX_CHILD_IDS = 64

/**
 * The child session of one call: its id and, when it exists, the session. The derived id comes
 * first; when a session of that id answers something else (a session of that id made by anyone,
 * in any scope, or the child of an earlier call that reused the same tool-use id with another
 * task), the next ids `…/2`, `…/3` are tried. With `task`, the child whose task it is (or one that
 * has not started); without, the last child of the call (the one that may still wait).
 */
async function locateChild(
  children: ChildSessions,
  parentId: string,
  call: ToolUseBlock,
  task?: string,
): Promise<{ id: string; child?: Session }> {
  const of: ChildOf = { parentSessionId: parentId, parentToolUseId: call.id }
  let last: { id: string; child: Session } | undefined
  for (let n = 1; n <= MAX_CHILD_IDS; n++) {
    const id = n === 1 ? childSessionId(parentId, call.id) : `${childSessionId(parentId, call.id)}/${n}`
    const found = await children.find(id, of)
    if (found === undefined) return task === undefined && last !== undefined ? last : { id }
    if (found === 'other') continue
    if (task === undefined) {
      last = { id, child: found }
      continue
    }
    const [first] = await found.getMessages({ beforeSeq: 1 })
    if (first === undefined || textOf(first.content) === task) return { id, child: found }
  }
  if (last !== undefined) return last
  throw new Error(`no free child session id after ${MAX_CHILD_IDS} tries`)
}

/** The calls a waiting child holds its parent's batch on, or `[]`. */
export async function childPending(
  children: ChildSessions,
  parentId: string,
  call: ToolUseBlock,
): Promise<PendingToolCall[]> {
  const { child } = await locateChild(children, parentId, call)
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
    const located = await locateChild(context.children, context.sessionId, call, task)
    child =
      located.child ??
      (await context.children.open({
        id: located.id,
        parentSessionId: context.sessionId,
        parentToolUseId: call.id,
        agent: profile,
      }))
  } catch (error) {
    return {
      kind: 'done',
      result: errorResult(call.id, `The ${profile} agent could not start: ${messageOf(error)}`),
    }
  }
  const stopForwarding = child.subscribe((event) =>
    context.emit({ type: 'subagent', sessionId: child.id, agent: profile, toolUseId: call.id, event }),
  )
  const onAbort = (): void => child.abort()
  context.signal.addEventListener('abort', onAbort, { once: true })
  try {
    let send: Promise<{ text: string; usage: TokenUsage; pending?: PendingToolCall[] }>
    if (child.state === 'waiting_input') {
      const pending = await child.getPending()
      const answers = pending.map((item) => context.answers?.get(item.toolUseId))
      if (answers.some((answer) => answer === undefined)) return { kind: 'waiting', pending }
      send = child.send(answers as PendingAnswer[], { [ROUTED_BY_PARENT]: true } as SendOptions)
    } else if (child.state === 'idle') {
      const [last] = await child.getMessages({ limit: 1 })
      if (last?.type === 'agent')
        return { kind: 'done', result: textResult(call.id, textOf(last.content), profile) }
      send = child.send(task, { agent: profile })
    } else {
      send = child.send(task, { agent: profile })
    }
    const result = await send
    // The child's requests until it stopped count in the parent send's usage (DESIGN §10.3).
    if (result.pending !== undefined && result.pending.length > 0)
      return { kind: 'waiting', pending: result.pending, usage: result.usage }
    return { kind: 'done', result: textResult(call.id, result.text, profile), usage: result.usage }
  } catch (error) {
    // Aborted with its parent: the call gets a result saying so, as an ordinary tool's does, so
    // the stored conversation keeps every tool call answered.
    if (context.signal.aborted) {
      return {
        kind: 'done',
        result: errorResult(call.id, `The ${profile} agent was stopped: the send was aborted.`),
      }
    }
    return { kind: 'done', result: errorResult(call.id, `The ${profile} agent failed: ${messageOf(error)}`) }
  } finally {
    context.signal.removeEventListener('abort', onAbort)
    stopForwarding()
  }
}

function textResult(toolUseId: string, text: string, profile: string): ToolResultBlock {
  // Providers refuse an empty text block: a child that answered with no text says so.
  return {
    type: 'tool_result',
    toolUseId,
    content: [{ type: 'text', text: text === '' ? `(the ${profile} agent gave no text)` : text }],
  }
}

function messageOf(error: unknown): string {
  if (isAgentError(error)) return `${error.message} (${error.code})`
  return thrownText(error)
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
    const child: ClosableSession | undefined = (await locateChild(children, parentId, call)).child
    if (child?.state === 'waiting_input') await child.closePending?.()
  }
}

/**
 * A child waiting for input is answered through its parent, which waits on its calls: answering
 * (`send`) or completing it directly would leave the parent waiting for good.
 */
export function assertNotWaitingChild(data: SessionData, action: 'send' | 'complete'): void {
  const parentId = data.parentSessionId
  if (parentId === undefined || data.state !== 'waiting_input') return
  if (action === 'send') {
    throw new ValidationError(
      `Session ${data.id} is a sub-agent waiting on behalf of session ${parentId}: send the answers to ${parentId} (getPending() there lists this session's calls), which routes them here.`,
    )
  }
  throw new SessionStateError(
    `Session ${data.id} is a sub-agent waiting on behalf of session ${parentId}: answer ${parentId}, or send it text to close the call.`,
    { state: 'waiting_input' },
  )
}
