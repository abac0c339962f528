// Drives test/fixtures/agent-process.mjs: an agent of several profiles in another process, on a
// SQLite file.
import { fileURLToPath } from 'node:url'
import type { DecodedRequest, Scenario } from '@agentx/contract-tests'
import type { PendingToolCall, SessionState } from '@agentx/core'
import { type NodeProcess, startNode } from './node-process.js'

const SCRIPT = fileURLToPath(new URL('../fixtures/agent-process.mjs', import.meta.url))

export interface Files {
  db: string
  publishLog: string
}

/** A request a fake provider of the process received: decoded, with its raw JSON body. */
export type ReceivedRequest = DecodedRequest & { body: Record<string, unknown> }

/** The fake providers of the process: the planner's (Claude), the coder's (OpenAI Responses), the researcher's (Gemini). */
export type Providers<T> = { claude: T; openai: T; gemini: T }

export interface SendReply {
  ok: true
  sessionId: string
  state: SessionState
  text: string
  pending: PendingToolCall[] | null
  /** What each fake provider of the process received during this send. */
  requests: Providers<ReceivedRequest[]>
}

export interface SendCommand {
  /** Default is a new session. */
  sessionId?: string
  agent?: string
  /** What each fake provider answers during this send. */
  replies?: Partial<Providers<Scenario[]>>
}

export interface Failure {
  ok: false
  error: { name: string; code?: string; message: string }
}

export class AgentProcess {
  readonly process: NodeProcess
  #next = 0

  private constructor(process: NodeProcess) {
    this.process = process
  }

  static async start(files: Files): Promise<AgentProcess> {
    const process = startNode([SCRIPT, '--db', files.db, '--publish-log', files.publishLog])
    await process.waitFor('"ready":true')
    return new AgentProcess(process)
  }

  get pid(): number {
    return this.process.pid
  }

  /** A send that must succeed. */
  async send(content: unknown, options: SendCommand = {}): Promise<SendReply> {
    const reply = await this.trySend(content, options)
    if (!reply.ok) throw new Error(`send failed: ${reply.error.name}: ${reply.error.message}`)
    return reply
  }

  /** A send that may be refused: the error comes back as a {@link Failure}. */
  trySend(content: unknown, options: SendCommand = {}): Promise<SendReply | Failure> {
    return this.#call({ op: 'send', content, ...options }) as Promise<SendReply | Failure>
  }

  async pending(sessionId: string): Promise<{ state: SessionState; pending: PendingToolCall[] }> {
    const reply = (await this.#call({ op: 'pending', sessionId })) as
      | { ok: true; state: SessionState; pending: PendingToolCall[] }
      | Failure
    if (!reply.ok) throw new Error(`pending failed: ${reply.error.name}: ${reply.error.message}`)
    return reply
  }

  async close(): Promise<void> {
    await this.#call({ op: 'close' })
    await this.process.exited
  }

  async #call(command: Record<string, unknown>): Promise<unknown> {
    const id = ++this.#next
    this.process.write(`${JSON.stringify({ id, ...command })}\n`)
    const marker = `{"id":${id},`
    await this.process.waitFor(marker, 1, 60_000)
    const line = this.process
      .output()
      .split('\n')
      .find((text) => text.startsWith(marker))
    return JSON.parse(line!)
  }
}
