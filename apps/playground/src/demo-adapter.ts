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
import { brokenExampleOf, exampleOf } from './demo-output.js'

/** The model names the demo provider offers. */
export const DEMO_MODELS: readonly string[] = ['agentx-demo-1']

/** Options of {@link createDemoAdapter}. */
export interface DemoAdapterOptions {
  /** Pause between two streamed words, in ms. Default is `30`. */
  delayMs?: number
}

/**
 * The provider options that mark a request as a retry of a failed send: the playground's retry
 * route sends them, and the demo's `/error` then succeeds (every other request with `/error` fails,
 * the agent's automatic retries included).
 */
export const DEMO_RETRY_OPTIONS: Record<string, unknown> = { demo: { retry: true } }

/** The input tokens `/compact` reports, so that a compaction threshold below it is crossed. */
export const DEMO_COMPACT_INPUT_TOKENS = 150_000

/**
 * An offline {@link AgentAdapter} that streams scripted, friendly replies word by word, so every
 * feature of the playground can be tried without an API key. What it does depends on the message:
 *
 * - `/tool` or a question about the time → calls `get_time`; a calculation → `calculator`;
 * - `/approve` → calls `deploy_service`, a tool that needs the user's approval;
 * - `/ask` → calls `ask_user`, a client tool the user answers in the browser;
 * - `/handoff` → calls `transfer_to_billing` (or back, `transfer_to_default`);
 * - `/delegate` → calls the `researcher` agent tool, which runs in a child session;
 * - `/long` (or `long`, `story`) → a long reply, to try Stop;
 * - `/markdown` → {@link DEMO_MARKDOWN}: headings, a table, highlighted code blocks, links;
 * - `/json` → a JSON object (structured output). With a send's `output` schema every message is
 *   answered with JSON made from that schema (see {@link exampleOf}); `/json broken` then answers
 *   JSON that misses required fields, so the send fails with `OUTPUT_INVALID`;
 * - `/error` → a retryable `rate_limit` error (`/error server`, `/error auth`, `/error stream` for
 *   other failures); a retry marked with {@link DEMO_RETRY_OPTIONS} succeeds;
 * - `/compact` → reports a context of {@link DEMO_COMPACT_INPUT_TOKENS} input tokens, so an agent
 *   with compaction summarises before its next request;
 * - `think`, `why`, `explain` → thinking before the answer.
 *
 * Which persona answers follows the profile's system prompt (`billing`, `researcher`). It honours
 * the abort signal and reports usage (estimated: about four characters a token).
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
    const reply = planReply(prompt, options)
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
      const usage = estimateUsage(prompt, options, outputParts.join(''))
      if (reply.inputTokens !== undefined) {
        usage.inputTokens = reply.inputTokens
        usage.totalTokens = usage.inputTokens + usage.outputTokens
      }
      yield { type: 'usage', usage }
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
  /** Reported instead of the estimate (`/compact`). */
  inputTokens?: number
}

/** What `/markdown` answers: every kind of block the UI renders, streamed word by word like any reply. */
export const DEMO_MARKDOWN: string = [
  '## Markdown, rendered as it streams',
  '',
  'Replies are **Markdown**: *emphasis*, ~~strikethrough~~, `inline code`, links such as ' +
    '[the AgentX design](https://example.com/agentx) and https://example.com/plain, and lists:',
  '',
  '1. finished blocks are rendered **once**',
  '2. only the block still streaming is redrawn',
  '',
  '| capability | where | status |',
  '| :--- | :---: | ---: |',
  '| fork | `session.fork()` | done |',
  '| rename | `session.update()` | done |',
  '| structured output | `SendOptions.output` | done |',
  '',
  '```ts',
  "import { createAgent } from '@agentx/core'",
  '',
  "const agent = createAgent({ systemPrompt: 'Be brief.' })",
  "const session = await agent.createSession({ summary: 'Demo' })",
  "const { text } = await session.send('Hello') // resolves when the reply is stored",
  '```',
  '',
  '```python',
  'def greet(name: str) -> str:',
  '    return f"Hello, {name}!"  # highlighted too',
  '```',
  '',
  '```sh',
  'pnpm install && pnpm start',
  '```',
  '',
  '> Raw HTML stays text: <script>alert("no")</script> and [a bad link](javascript:alert(1)) do nothing.',
].join('\n')

const LONG_STORY =
  'Once upon a time, in a repository far away, a small agent learned to persist every word it said. ' +
  'Each session began before its first message, and each message was saved before it was shown. ' +
  'When the process crashed, the agent woke up, found its sessions marked interrupted, and carried on. ' +
  'When the provider was overloaded, it waited politely, with exponential backoff and a little jitter, and tried again. ' +
  'When the user pressed stop, it kept the partial reply, marked it incomplete, and listened for the next question. ' +
  'It spoke to Claude, to OpenAI, to Gemini and to a little offline demo, and it stored its memories in SQLite or PostgreSQL. ' +
  'And every night, the contract tests checked that nothing had been lost. The end — or press stop any time to cut this story short.'

const HELP =
  'I am the **offline demo provider** of the AgentX playground: my replies are scripted and no model is called. Try:\n\n' +
  '- `/tool` — a tool call (or ask *what time is it*, or to compute `12 * (3 + 4)`)\n' +
  '- `/approve` — a tool that waits for your approval\n' +
  '- `/ask` — a question for you, answered in the browser (a client tool)\n' +
  '- `/handoff` — hand the conversation to the billing agent (and back)\n' +
  '- `/delegate` — a sub-agent working in a child session\n' +
  '- `/long` — a long reply to stop half way\n' +
  '- `/markdown` — tables, highlighted code with a Copy button, links\n' +
  '- `/json` — structured output, checked against a schema (`/json broken`: output that does not match)\n' +
  '- `/error` — a provider error, then Retry\n' +
  '- `/compact` — fill the context so compaction runs\n' +
  '- *why is the sky blue?* — thinking you can unfold'

/** The demo's structured output: what `/json` answers. */
export const DEMO_JSON_OUTPUT: { city: string; temperatureC: number; conditions: string; advice: string[] } =
  {
    city: 'Paris',
    temperatureC: 21,
    conditions: 'sunny',
    advice: ['wear sunglasses', 'drink water'],
  }

function planReply(prompt: string | ContentBlock[], options: AdapterStreamOptions): PlannedReply {
  const history = options.history
  const persona = personaOf(options.systemPrompt)
  const tools = new Set((options.tools ?? []).map((tool) => tool.name))
  if (Array.isArray(prompt) && prompt.some((block) => block.type === 'tool_result')) {
    return answerToolResults(
      prompt.filter((block): block is ToolResultBlock => block.type === 'tool_result'),
      history,
      persona,
    )
  }
  const text = textOf(prompt).trim()
  const lower = text.toLowerCase()
  if (persona === 'researcher') return research(text)

  const errorMatch = /^\/error(?:\s+(auth|server|stream))?\b/i.exec(text)
  if (errorMatch !== null) {
    const demoOptions = options.providerOptions?.demo as { retry?: unknown } | undefined
    if (demoOptions?.retry !== true) return plannedError(errorMatch[1]?.toLowerCase())
    return {
      text: 'This time the request went through: the retry worked. The failed attempt is kept in the history.',
    }
  }

  // Structured output asked for (DESIGN §10.5): the reply is JSON only, filled in from the schema.
  if (options.output !== undefined) {
    const value = /^\/json\s+broken\b/i.test(text)
      ? brokenExampleOf(options.output.schema)
      : exampleOf(options.output.schema)
    return { text: JSON.stringify(value, null, 2) }
  }

  const command = /^\/([a-z]+)\b\s*(.*)$/is.exec(text)
  if (command !== null) {
    const [, name = '', rest = ''] = command
    const planned = planCommand(name.toLowerCase(), rest.trim(), tools, persona)
    if (planned !== undefined) return planned
  }

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
    return withThinking(clockCall(zone))
  }
  if (/\b(long|story)\b/.test(lower)) return withThinking({ text: LONG_STORY })
  if (thinking !== undefined) {
    return withThinking({
      text:
        'Here is the answer after some (scripted) thinking. Open the **Thinking** section above this reply to read it. ' +
        'With a real provider such as Claude or Gemini, the model’s own reasoning appears there.',
    })
  }
  if (/\bsummar(y|ise|ize)\b/.test(lower) && history.length > 0) {
    return {
      text: `Summary of the earlier conversation: ${history.length} messages, scripted by the offline demo; nothing in them needs remembering.`,
    }
  }
  if (persona === 'billing') {
    return {
      text:
        `Billing agent here. You said: “${excerpt(text)}”. Your (pretend) plan is **Team**, next invoice on the 1st. ` +
        'Send `/handoff` to go back to the demo assistant.',
    }
  }
  if (/^(hi|hello|hey|hallo|bonjour|good (morning|afternoon|evening))\b/.test(lower)) return { text: HELP }
  return {
    text:
      `You said: “${excerpt(text)}”. I am the offline demo, so I can only echo and play a few tricks.\n\n${HELP}\n\n` +
      'Add `ANTHROPIC_API_KEY`, `OPENAI_API_KEY` or `GEMINI_API_KEY` to the environment to talk to a real model.',
  }
}

function planCommand(
  name: string,
  rest: string,
  tools: ReadonlySet<string>,
  persona: Persona,
): PlannedReply | undefined {
  const missing = (tool: string): PlannedReply => ({
    text: `This agent has no \`${tool}\` tool, so I cannot show that here. The demo provider of the playground has it.`,
  })
  switch (name) {
    case 'help':
      return { text: HELP }
    case 'tool':
      return clockCall(/^[A-Z][A-Za-z_]+\/[A-Za-z_/]+$/.test(rest) ? rest : undefined)
    case 'approve':
      if (!tools.has('deploy_service')) return missing('deploy_service')
      return {
        text: 'I will deploy the web service to production. That needs your approval first.',
        toolCall: {
          type: 'tool_use',
          id: toolCallId(),
          name: 'deploy_service',
          input: { service: rest === '' ? 'web' : rest.split(/\s+/)[0], environment: 'production' },
        },
      }
    case 'ask':
      if (!tools.has('ask_user')) return missing('ask_user')
      return {
        text: 'I need one detail from you first.',
        toolCall: {
          type: 'tool_use',
          id: toolCallId(),
          name: 'ask_user',
          input: { question: rest === '' ? 'Which city should I check the weather for?' : rest },
        },
      }
    case 'handoff': {
      const target = persona === 'billing' ? 'default' : 'billing'
      const tool = `transfer_to_${target}`
      if (!tools.has(tool)) return missing(tool)
      return {
        text:
          target === 'billing'
            ? 'That is a billing question: I am handing you over to the billing agent.'
            : 'Handing you back to the demo assistant.',
        toolCall: { type: 'tool_use', id: toolCallId(), name: tool, input: {} },
      }
    }
    case 'delegate':
      if (!tools.has('researcher')) return missing('researcher')
      return {
        text: 'I will ask the researcher sub-agent; it works in a child session of its own.',
        toolCall: {
          type: 'tool_use',
          id: toolCallId(),
          name: 'researcher',
          input: { task: rest === '' ? 'Find three facts about persisted agent sessions.' : rest },
        },
      }
    case 'markdown':
      return { text: DEMO_MARKDOWN }
    case 'long':
      return { text: LONG_STORY }
    case 'json':
      return { text: JSON.stringify(DEMO_JSON_OUTPUT, null, 2) }
    case 'compact':
      return {
        text:
          `Pretend the context is now full: this reply reports ${DEMO_COMPACT_INPUT_TOKENS.toLocaleString('en')} input tokens. ` +
          'Before my next request, an agent with compaction summarises the earlier messages.',
        toolCall: { type: 'tool_use', id: toolCallId(), name: 'get_time', input: {} },
        inputTokens: DEMO_COMPACT_INPUT_TOKENS,
      }
    default:
      return undefined
  }
}

function clockCall(zone: string | undefined): PlannedReply {
  return {
    text: 'Let me check the clock with the `get_time` tool.',
    toolCall: {
      type: 'tool_use',
      id: toolCallId(),
      name: 'get_time',
      input: zone === undefined ? {} : { timeZone: zone },
    },
  }
}

function research(task: string): PlannedReply {
  return {
    text:
      `Findings on “${excerpt(task)}”:\n\n` +
      '1. Every message is persisted before it is shown.\n' +
      '2. A crashed send is found `interrupted` and can be retried.\n' +
      '3. Child sessions like this one are stored too, with their parent’s id.',
  }
}

type Persona = 'default' | 'billing' | 'researcher'

function personaOf(systemPrompt: string | undefined): Persona {
  if (systemPrompt?.startsWith('You are the billing agent of the AgentX demo')) return 'billing'
  if (systemPrompt?.startsWith('You are the researcher sub-agent of the AgentX demo')) return 'researcher'
  return 'default'
}

function answerToolResults(
  results: ToolResultBlock[],
  history: readonly AnyMessage[],
  persona: Persona,
): PlannedReply {
  const calls = new Map<string, ToolUseBlock>()
  for (const message of history) {
    if (!Array.isArray(message.content)) continue
    for (const block of message.content) if (block.type === 'tool_use') calls.set(block.id, block)
  }
  let closing = ' Anything else I can pretend to help with?'
  const sentences = results.map((result) => {
    const call = calls.get(result.toolUseId)
    const raw = typeof result.content === 'string' ? result.content : textOf(result.content)
    if (call?.name.startsWith('transfer_to_')) {
      closing = ''
      return persona === 'billing'
        ? 'Hi, this is the **billing agent**. I can help with invoices, plans and refunds. Send `/handoff` to go back.'
        : 'Hello again, the **demo assistant** here. Send `/handoff` to talk to billing.'
    }
    if (call?.name === 'deploy_service') {
      const value = parseJson(raw)
      if (result.isError) return `The deployment did not happen: ${raw}`
      if (isRecord(value)) {
        return `Deployed **${String(value.service)}** to **${String(value.environment)}** (version ${String(value.version)}).`
      }
    }
    if (call?.name === 'ask_user') {
      return result.isError ? `I got no answer (${raw}).` : `Thanks! You answered “${excerpt(raw)}”.`
    }
    if (call?.name === 'researcher') {
      return result.isError
        ? `The researcher failed: ${raw}`
        : `The researcher sub-agent reports:\n\n${raw}\n\n`
    }
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
  return { text: `${sentences.join(' ')}${closing}`.trim() }
}

function plannedError(variant: string | undefined): PlannedReply {
  const hint = ' (demo error — press Retry: the retry succeeds)'
  if (variant === 'auth') {
    return {
      text: '',
      // Not retryable, so the page offers no Retry: send a message again instead.
      error: new AdapterError(
        'The demo provider rejected the credentials (demo error — send again: it succeeds).',
        {
          kind: 'authentication',
          provider: 'demo',
          status: 401,
        },
      ),
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
  if (flat.length <= 80) return flat
  // Never half of a surrogate pair (an emoji): cut before it.
  const end = /[\ud800-\udbff]/.test(flat[78] ?? '') ? 78 : 79
  return `${flat.slice(0, end)}…`
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
