import { randomUUID } from 'node:crypto'
import {
  AdapterError,
  type AdapterMessage,
  type AdapterStreamOptions,
  type AgentAdapter,
  type AnyMessage,
  type ContentBlock,
  isAdapterError,
  type TokenUsage,
  type ToolResultBlock,
  type ToolUseBlock,
} from '@agentx/core'
import { textOf } from '@agentx/core/provider'

/** The model names the demo provider offers. */
export const DEMO_MODELS: readonly string[] = ['agentx-demo-1']

/** Options of {@link createDemoAdapter}. */
export interface DemoAdapterOptions {
  /** Pause between two streamed words, in ms. Default is `30`. */
  delayMs?: number
}

/**
 * An offline {@link AgentAdapter} that streams scripted, friendly replies word by word, so every
 * feature of the playground can be tried without an API key. What it does depends on the message:
 *
 * - asks for the time (`time`, `clock`, `date`) → calls the `get_time` tool;
 * - contains a calculation (`12 * (3 + 4)`) → calls the `calculator` tool;
 * - `think`, `why`, `explain` → streams thinking before the answer;
 * - `long`, `story` → a long reply (to try the stop button);
 * - `/error` → fails with a `rate_limit` error (`/error server`, `/error auth`, `/error stream` for
 *   other failures); sending the same message again right after succeeds, so retry can be tried.
 *
 * It honours the abort signal and reports usage (estimated: about four characters a token).
 */
export class DemoAdapter implements AgentAdapter {
  readonly specificationVersion = 'v1' as const
  readonly #delayMs: number

  constructor(options: DemoAdapterOptions = {}) {
    const delayMs = options.delayMs ?? 30
    if (!Number.isFinite(delayMs) || delayMs < 0)
      throw new RangeError(`delayMs must be >= 0, got ${String(delayMs)}.`)
    this.#delayMs = delayMs
  }

  getName(): string {
    return 'demo'
  }

  async *stream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): AsyncGenerator<AdapterMessage> {
    const signal = options.signal
    this.#throwIfAborted(signal)
    const reply = planReply(prompt, options.history)
    const outputParts: string[] = []
    try {
      if (reply.thinking !== undefined) {
        for (const word of words(reply.thinking)) {
          await this.#pause(signal)
          outputParts.push(word)
          yield { type: 'thinking-delta', text: word }
        }
      }
      for (const word of words(reply.text)) {
        await this.#pause(signal)
        outputParts.push(word)
        yield { type: 'text-delta', text: word }
      }
      if (reply.error !== undefined) {
        await this.#pause(signal)
        throw reply.error
      }
      const content: ContentBlock[] = []
      if (reply.thinking !== undefined) content.push({ type: 'thinking', text: reply.thinking })
      if (reply.text !== '') content.push({ type: 'text', text: reply.text })
      if (reply.toolCall !== undefined) {
        await this.#pause(signal)
        const { id, name, input } = reply.toolCall
        yield { type: 'tool-call', id, name, input }
        content.push({ ...reply.toolCall })
      }
      yield { type: 'usage', usage: estimateUsage(prompt, options, outputParts.join('')) }
      yield { type: 'message', content, stopReason: reply.toolCall === undefined ? 'end_turn' : 'tool_use' }
    } catch (error) {
      if (signal?.aborted && !(isAdapterError(error) && error.kind === 'aborted')) throw this.#aborted(signal)
      throw error
    }
  }

  async #pause(signal: AbortSignal | undefined): Promise<void> {
    this.#throwIfAborted(signal)
    if (this.#delayMs === 0) return
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        clearTimeout(timer)
        reject(this.#aborted(signal!))
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }, this.#delayMs)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  #throwIfAborted(signal: AbortSignal | undefined): void {
    if (signal?.aborted) throw this.#aborted(signal)
  }

  #aborted(signal: AbortSignal): AdapterError {
    return new AdapterError('The demo reply was aborted.', {
      kind: 'aborted',
      provider: 'demo',
      cause: signal.reason,
    })
  }
}

/** Creates the offline {@link DemoAdapter}. */
export function createDemoAdapter(options: DemoAdapterOptions = {}): DemoAdapter {
  return new DemoAdapter(options)
}

interface PlannedReply {
  thinking?: string
  text: string
  toolCall?: ToolUseBlock
  /** Thrown after `text` was streamed. */
  error?: AdapterError
}

const LONG_STORY =
  'Once upon a time, in a repository far away, a small agent learned to persist every word it said. ' +
  'Each session began before its first message, and each message was saved before it was shown. ' +
  'When the process crashed, the agent woke up, found its sessions marked interrupted, and carried on. ' +
  'When the provider was overloaded, it waited politely, with exponential backoff and a little jitter, and tried again. ' +
  'When the user pressed stop, it kept the partial reply, marked it incomplete, and listened for the next question. ' +
  'It spoke to Claude, to OpenAI, to Gemini and to a little offline demo, and it stored its memories in SQLite or PostgreSQL. ' +
  'And every night, the contract tests checked that nothing had been lost. The end — or press stop any time to cut this story short.'

function planReply(prompt: string | ContentBlock[], history: readonly AnyMessage[]): PlannedReply {
  if (Array.isArray(prompt) && prompt.some((block) => block.type === 'tool_result')) {
    return answerToolResults(
      prompt.filter((block): block is ToolResultBlock => block.type === 'tool_result'),
      history,
    )
  }
  const text = textOf(prompt).trim()
  const lower = text.toLowerCase()

  const errorMatch = /\/error(?:\s+(auth|server|stream))?/i.exec(text)
  if (errorMatch !== null && !isRetryOf(text, history)) return plannedError(errorMatch[1]?.toLowerCase())

  const thinking = /\b(think|thinking|why|explain|reason)\b/i.test(text)
    ? `The user wrote "${excerpt(text)}". I am the offline demo, so I cannot really reason, but I can show what ` +
      'thinking looks like: it streams first, is stored with the reply, and the UI folds it away.'
    : undefined
  const withThinking = (reply: PlannedReply): PlannedReply =>
    thinking === undefined ? reply : { thinking, ...reply }

  const expression = findExpression(text)
  if (expression !== undefined) {
    return withThinking({
      text: `Let me work that out with the calculator tool: \`${expression}\`.`,
      toolCall: { type: 'tool_use', id: toolCallId(), name: 'calculator', input: { expression } },
    })
  }
  if (/\b(time|clock|date|today)\b/.test(lower)) {
    const zone = /\b([A-Z][A-Za-z_]+\/[A-Z][A-Za-z_]+(?:\/[A-Z][A-Za-z_]+)?)\b/.exec(text)?.[1]
    return withThinking({
      text: 'Let me check the clock with the `get_time` tool.',
      toolCall: {
        type: 'tool_use',
        id: toolCallId(),
        name: 'get_time',
        input: zone === undefined ? {} : { timeZone: zone },
      },
    })
  }
  if (/\b(long|story)\b/.test(lower)) return withThinking({ text: LONG_STORY })
  if (thinking !== undefined) {
    return withThinking({
      text:
        'Here is the answer after some (scripted) thinking. Open the **Thinking** section above this reply to read it. ' +
        'With a real provider such as Claude or Gemini, the model’s own reasoning appears there.',
    })
  }
  if (/^(hi|hello|hey|hallo|bonjour|good (morning|afternoon|evening))\b/.test(lower)) {
    return {
      text:
        'Hello! I am the **offline demo provider** of the AgentX playground: my replies are scripted and no model is called. ' +
        'Try asking me *what time is it*, to compute `12 * (3 + 4)`, to *think* about something, to tell a *long story* ' +
        '(and press Stop), or send `/error` to see how failures and retries look.',
    }
  }
  return {
    text:
      `You said: “${excerpt(text)}”. I am the offline demo, so I can only echo and play a few tricks:\n\n` +
      '- ask for the **time** to see a tool call\n' +
      '- send a calculation such as `2 ^ 10 - 24`\n' +
      '- ask me to **think** or to tell a **long story**\n' +
      '- send `/error` to try the error and retry flow\n\n' +
      'Add `ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `GEMINI_API_KEY` to the environment to talk to a real model.',
  }
}

function answerToolResults(results: ToolResultBlock[], history: readonly AnyMessage[]): PlannedReply {
  const calls = new Map<string, ToolUseBlock>()
  for (const message of history) {
    if (!Array.isArray(message.content)) continue
    for (const block of message.content) if (block.type === 'tool_use') calls.set(block.id, block)
  }
  const sentences = results.map((result) => {
    const call = calls.get(result.toolUseId)
    const raw = typeof result.content === 'string' ? result.content : textOf(result.content)
    if (result.isError) return `The ${call?.name ?? 'tool'} tool failed: ${raw}`
    const value = parseJson(raw)
    if (call?.name === 'calculator' && isRecord(value) && typeof value.result === 'number') {
      return `The calculator says \`${String(value.expression)}\` = **${value.result}**.`
    }
    if (call?.name === 'get_time' && isRecord(value) && typeof value.local === 'string') {
      return `It is **${value.local}** (${String(value.timeZone)}).`
    }
    return `The ${call?.name ?? 'tool'} tool answered: ${raw}`
  })
  return { text: `${sentences.join(' ')} Anything else I can pretend to help with?` }
}

function plannedError(variant: string | undefined): PlannedReply {
  const hint = ' (demo error — press Retry; the same message succeeds the second time)'
  if (variant === 'auth') {
    return {
      text: '',
      error: new AdapterError(`The demo provider rejected the credentials${hint}.`, {
        kind: 'authentication',
        provider: 'demo',
        status: 401,
      }),
    }
  }
  if (variant === 'server') {
    return {
      text: '',
      error: new AdapterError(`The demo provider had an internal error${hint}.`, {
        kind: 'server',
        provider: 'demo',
        status: 500,
      }),
    }
  }
  if (variant === 'stream') {
    return {
      text: 'This reply starts fine, but the connection will drop in the middle of',
      error: new AdapterError(`The demo stream was cut before it finished${hint}.`, {
        kind: 'network',
        provider: 'demo',
      }),
    }
  }
  return {
    text: '',
    error: new AdapterError(`The demo provider is rate limited${hint}.`, {
      kind: 'rate_limit',
      provider: 'demo',
      status: 429,
    }),
  }
}

/**
 * A retry is the same text sent again right after it failed: the history then ends with it,
 * possibly followed by the partial reply the failure left (`incomplete`).
 */
function isRetryOf(text: string, history: readonly AnyMessage[]): boolean {
  let index = history.length - 1
  while (index >= 0 && history[index]?.type === 'agent' && history[index]?.incomplete === true) index--
  const last = history[index]
  return last !== undefined && last.type === 'user' && textOf(last.content).trim() === text
}

/** The first arithmetic expression in `text` with at least one binary operator, e.g. `12 * (3 + 4)`. */
function findExpression(text: string): string | undefined {
  for (const match of text.matchAll(/[-(]*\d[\d\s.()+\-*/%^]*/g)) {
    const candidate = match[0].trim().replace(/[\s+\-*/%^(]+$/, '')
    if (/\d\s*[-+*/%^]\s*[-(]*\d/.test(candidate)) return candidate
  }
  return undefined
}

function words(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? []
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ')
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat
}

function estimateUsage(
  prompt: string | ContentBlock[],
  options: AdapterStreamOptions,
  output: string,
): TokenUsage {
  const input = JSON.stringify([
    options.systemPrompt ?? '',
    options.history.map((m) => m.content),
    prompt,
  ]).length
  const inputTokens = Math.max(1, Math.ceil(input / 4))
  const outputTokens = Math.max(1, Math.ceil(output.length / 4))
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }
}

function toolCallId(): string {
  return `demo_${randomUUID().replaceAll('-', '').slice(0, 16)}`
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
