// Drives test/fixtures/agent-process.mjs: an agent in another process on the same SQLite file.
import { fileURLToPath } from 'node:url'
import type { DecodedRequest, Scenario } from '@agentx/contract-tests'
import type { PendingToolCall, SessionState } from '@agentx/core'
import { type NodeProcess, startNode } from './node-process.js'

const SCRIPT = fileURLToPath(new URL('../fixtures/agent-process.mjs', import.meta.url))

export interface Files {
  db: string
  deployLog: string
  runsLog: string
}

export interface SendReply {
  ok: true
  sessionId: string
  state: SessionState
  text: string
  pending: PendingToolCall[] | null
  /** The model requests the process's fake provider received during this send, decoded. */
  requests: DecodedRequest[]
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

  static async start(
    files: Files,
    options: { toolDelayMs?: number; leaseTtlMs?: number; crashWhenWaiting?: boolean } = {},
  ): Promise<AgentProcess> {
    const process = startNode([
      SCRIPT,
      '--db',
      files.db,
      '--deploy-log',
      files.deployLog,
      '--runs-log',
      files.runsLog,
      '--tool-delay-ms',
      String(options.toolDelayMs ?? 0),
      '--lease-ttl-ms',
      String(options.leaseTtlMs ?? 30_000),
      ...(options.crashWhenWaiting === true ? ['--crash-when-waiting'] : []),
    ])
    await process.waitFor('"ready":true')
    return new AgentProcess(process)
  }

  get pid(): number {
    return this.process.pid
  }

  send(
    content: unknown,
    options: { sessionId?: string; replies?: Scenario[] } = {},
  ): Promise<SendReply | Failure> {
    return this.#call({ op: 'send', content, ...options }) as Promise<SendReply | Failure>
  }

  pending(
    sessionId: string,
  ): Promise<{ ok: true; state: SessionState; pending: PendingToolCall[] } | Failure> {
    return this.#call({ op: 'pending', sessionId }) as Promise<
      { ok: true; state: SessionState; pending: PendingToolCall[] } | Failure
    >
  }

  async close(): Promise<void> {
    await this.#call({ op: 'close' })
    await this.process.exited
  }

  async #call(command: Record<string, unknown>): Promise<unknown> {
    const id = ++this.#next
    this.process.write(`${JSON.stringify({ id, ...command })}\n`)
    const marker = `{"id":${id},`
    await this.process.waitFor(marker)
    const line = this.process
      .output()
      .split('\n')
      .find((text) => text.startsWith(marker))
    return JSON.parse(line!)
  }
}
