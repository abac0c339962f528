import type { AdapterStreamOptions, AgentAdapter, ToolDefinition } from '../contracts/agent-adapter.js'
import type { AnyMessage, ContentBlock, TokenUsage } from '../contracts/messages.js'
import { AgentError } from '../errors/agent-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { isAdapterError } from '../errors/adapter-error.js'
import { backoffDelay, type RetryOptions } from '../retry/retry-options.js'
import { sleep } from '../util/abort.js'
import { estimateTokens } from '../util/estimate-tokens.js'
import type { Logger } from '../util/logger.js'
import { addUsage } from '../util/token-usage.js'
import { uuidv7 } from '../util/uuid-v7.js'
import { describe, isPlainObject, rejectUnknownKeys } from './validate-input.js'
import { historyForModel } from './continuation.js'
import type { SendRun, SessionCore } from './session-core.js'
import { DEFAULT_PROFILE, type SessionProfile } from './session-profile.js'

/**
 * When and how a session compacts its conversation (DESIGN §10.4): `AgentConfig.compaction` or
 * `createSession({ compaction })`.
 *
 * Before a model request whose input would pass `thresholdTokens`, the kernel asks a model to
 * summarise everything older than the last `keepRecentMessages` messages (and the previous
 * summary), persists the summary as a `system` message with `compaction: { throughSeq }`, and
 * from then on sends the model the system prompt, that summary and only the messages after
 * `throughSeq`. Nothing is deleted.
 */
export interface CompactionOptions {
  /**
   * Compact before a model request whose input would pass this many tokens: the last response's
   * `usage.inputTokens` plus an estimate ({@link estimateTokens}) of what came after it, or an
   * estimate of the whole request when no response since the last compaction reported usage.
   * Pick it well below the model's context window: the estimate can be off by ±50 %.
   */
  thresholdTokens: number
  /**
   * How many of the latest messages stay verbatim (the request's prompt counts as one). The
   * kept tail grows when it would start with tool results (a tool call is never separated from
   * its result) or with a reply whose user message would be summarised (a question stays with
   * its answer). Default is `8`.
   */
  keepRecentMessages?: number
  /** The adapter that writes the summary (a cheaper model). Default is the session's adapter. */
  adapter?: AgentAdapter
  /**
   * The model of the summary request. Default is the request's model when `adapter` is not given,
   * otherwise the adapter's own default model.
   */
  model?: string
  /** The summariser's instructions (its system prompt). Default is {@link DEFAULT_COMPACTION_INSTRUCTIONS}. */
  instructions?: string
}

/** Options of `session.compact()`. */
export interface CompactOptions {
  /** How many of the latest messages stay verbatim. Default is the session's `compaction.keepRecentMessages`, or `8`. */
  keepRecentMessages?: number
  /** Aborts the summary request, like `session.abort()`. */
  signal?: AbortSignal
}

/** Default of {@link CompactionOptions.keepRecentMessages}. */
export const DEFAULT_KEEP_RECENT_MESSAGES: number = 8

/** Default of {@link CompactionOptions.instructions}. */
export const DEFAULT_COMPACTION_INSTRUCTIONS: string = [
  'You compress a conversation between a user and an AI assistant so that the assistant can continue',
  'it without the original messages. Write a summary that keeps: what the user wants and asked for,',
  'decisions and agreements, facts, names, numbers, file paths and identifiers that came up, what',
  'tools returned that still matters, what was tried and failed, and open tasks and questions. If an',
  'earlier summary is given, merge it into the new one; drop nothing from it that still matters.',
  'Be concise and factual, write in the language of the conversation, and output only the summary.',
].join(' ')

/** How the summary is introduced to the model in place of the messages it covers. */
const SUMMARY_HEADER = 'Summary of the earlier conversation (the messages it covers are not shown):'

/** The latest compaction summary among `messages`, if any. */
export function latestCompaction(messages: readonly AnyMessage[]): AnyMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.compaction !== undefined) return messages[i]
  }
  return undefined
}

/**
 * The history of a model request, as the model should see it: the first `end` messages, or —
 * once the session was compacted — the latest summary followed by only the messages after its
 * `throughSeq` (other summaries left out), each as {@link historyForModel} shows it.
 *
 * The summary is a `system` message, which adapters add to the system prompt. When the kept
 * messages open with a reply of the model (a compaction inside a long tool loop), the summary is
 * shown as the opening `user` turn instead: Claude and Gemini reject a conversation whose first
 * turn is the model's.
 */
export function historyWithCompaction(messages: readonly AnyMessage[], end: number): AnyMessage[] {
  const summary = latestCompaction(messages)
  if (summary === undefined) return historyForModel(messages, end)
  const after = visibleAfter(messages, end, summary.compaction!.throughSeq)
  const opensWithReply = after[0] !== undefined && after[0].type !== 'user'
  return [summaryForModel(summary, opensWithReply ? 'user' : 'system'), ...after]
}

/**
 * The input tokens a model request would take: the usage of the last response since the latest
 * compaction plus an estimate of what came after it (that response's own content, later
 * messages, the prompt), or an estimate of everything (system prompt, tool definitions, history,
 * prompt) when no such response reported `usage.inputTokens`.
 */
export function estimateRequestTokens(request: {
  history: readonly AnyMessage[]
  prompt: string | ContentBlock[]
  systemPrompt?: string
  tools?: readonly ToolDefinition[]
}): number {
  const { history, prompt } = request
  const first = history[0]
  const summarySeq = first?.compaction === undefined ? -1 : first.seq
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]!
    const counted = message.usage?.inputTokens ?? 0
    if (message.type === 'agent' && message.seq > summarySeq && counted > 0) {
      return counted + estimateTokens(history.slice(i)) + estimateTokens(prompt)
    }
  }
  return (
    estimateTokens(request.systemPrompt ?? '') +
    (request.tools === undefined ? 0 : estimateTokens(JSON.stringify(request.tools))) +
    estimateTokens(history) +
    estimateTokens(prompt)
  )
}

/** What a compaction covers: the messages to summarise, the summary they build on, and the last seq covered. */
export interface CompactionPlan {
  previous: AnyMessage | undefined
  messages: AnyMessage[]
  throughSeq: number
}

/**
 * Picks what to summarise among the first `end` messages: everything the model sees since the
 * latest summary except the last `keepRecentMessages`. The kept tail grows back to the user
 * message that opened its first turn (a question stays with its answer, tool results with their
 * calls); only a tool loop still running (the last turn, ending in tool calls or results) is cut
 * between two of its steps instead, never before a `tool` message. A final agent message with
 * tool calls is kept even when `keepRecentMessages` is `0` (its calls are still waiting for
 * results). `undefined` when nothing is old enough to summarise.
 */
export function planCompaction(
  messages: readonly AnyMessage[],
  end: number,
  keepRecentMessages: number,
): CompactionPlan | undefined {
  const previous = latestCompaction(messages)
  const visible = visibleAfter(messages, end, previous?.compaction?.throughSeq ?? -1)
  let cut = Math.max(0, visible.length - keepRecentMessages)
  const last = visible[visible.length - 1]
  if (cut === visible.length && last !== undefined && hasToolCalls(last)) cut -= 1
  if (cut < visible.length) {
    const inLastTurn = !visible.some((message, index) => index > cut && message.type === 'user')
    const inProgress = last!.type === 'tool' || hasToolCalls(last!)
    if (inLastTurn && inProgress) {
      // A tool loop still running: cut between two of its steps, never between a call and its
      // result, and its first step stays with the question.
      while (cut > 0 && visible[cut]!.type === 'tool') cut -= 1
      if (cut > 0 && visible[cut]!.type === 'agent' && visible[cut - 1]!.type === 'user') cut -= 1
    } else {
      // A finished turn is kept whole: a question stays with its answer, tool results with their calls.
      while (cut > 0 && visible[cut]!.type !== 'user') cut -= 1
    }
  }
  if (cut === 0) return undefined
  return { previous, messages: visible.slice(0, cut), throughSeq: visible[cut - 1]!.seq }
}

/** What the summariser call needs. */
export interface SummarizeOptions {
  adapter: AgentAdapter
  /** `''` lets the adapter use its default model. */
  model: string
  instructions: string
  signal: AbortSignal
  retry: Required<RetryOptions>
  logger: Logger | undefined
  sessionId: string
}

/**
 * Asks the summariser for the summary of `plan`: one request whose system prompt is the
 * instructions and whose prompt is the previous summary and a plain-text transcript of the
 * messages (tool calls and results as text, images as placeholders, thinking left out) — so any
 * model of any provider can write it. A retryable error before the first event is tried again
 * like a model request. Resolves to the summary text and the request's usage.
 *
 * @throws the summariser's error, or an {@link AgentError} of code `COMPACTION_EMPTY` when it
 * answered without text.
 */
export async function summarize(
  plan: CompactionPlan,
  options: SummarizeOptions,
): Promise<{ text: string; usage: TokenUsage | undefined }> {
  const prompt = summaryPrompt(plan)
  for (let attempt = 0; ; attempt++) {
    let started = false
    try {
      let deltas = ''
      let final: string | undefined
      let usage: TokenUsage | undefined
      for await (const event of options.adapter.stream(prompt, {
        model: options.model,
        history: [],
        systemPrompt: options.instructions,
        signal: options.signal,
      })) {
        started = true
        if (event.type === 'text-delta') deltas += event.text
        else if (event.type === 'message') final = textOf(event.content)
        else if (event.type === 'usage')
          usage = usage === undefined ? { ...event.usage } : addUsage(usage, event.usage)
      }
      const text = (final ?? deltas).trim()
      if (text === '') {
        throw new AgentError(
          'The summariser answered without text; nothing was compacted.',
          'COMPACTION_EMPTY',
        )
      }
      return { text, usage }
    } catch (error) {
      if (!isAdapterError(error) || !error.retryable || error.kind === 'aborted') throw error
      if (options.signal.aborted || started || attempt >= options.retry.maxRetries) throw error
      const delayMs = error.retryAfterMs ?? backoffDelay(attempt + 1, options.retry)
      if (delayMs > options.retry.maxDelayMs) throw error
      options.logger?.warn('agentx: retrying a failed summary request', {
        sessionId: options.sessionId,
        attempt: attempt + 1,
        delayMs,
      })
      await sleep(delayMs, options.signal)
    }
  }
}

/**
 * The compaction settings a request of `profile` runs with: the profile's own, else the
 * session's (`createSession({ compaction })`) or the agent's. Compaction is about the shared
 * conversation, so unlike knowledge a profile without its own settings uses the agent's.
 */
export function compactionFor(core: SessionCore, profile: SessionProfile): CompactionOptions | undefined {
  return (profile.name === DEFAULT_PROFILE ? undefined : profile.compaction) ?? core.options.compaction
}

/**
 * The compaction step of the send loop, before each model request (DESIGN §10.4): when the
 * request's input would pass `thresholdTokens`, the older part of the conversation is summarised
 * and persisted; the caller then builds the request again from the summary. Resolves to the
 * summary written, if any. A failing summariser does not fail the send (see {@link summarizeInto}).
 */
export async function compactBeforeRequest(
  core: SessionCore,
  run: SendRun,
  step: {
    prompt: string | ContentBlock[]
    /** The index of the prompt's message in the history. */
    historyEnd: number
    request: AdapterStreamOptions
    adapter: AgentAdapter
    settings: CompactionOptions | undefined
  },
): Promise<AnyMessage | undefined> {
  const { settings, request } = step
  if (settings === undefined || run.compactionFailed) return undefined
  if (estimateRequestTokens({ ...request, prompt: step.prompt }) <= settings.thresholdTokens) return undefined
  // The prompt (at `historyEnd`) is sent as the prompt, so it is always kept, never summarised:
  // with `keepRecentMessages: 0` too.
  const keep = Math.max(1, settings.keepRecentMessages ?? DEFAULT_KEEP_RECENT_MESSAGES)
  return summarizeInto(core, run, {
    end: step.historyEnd + 1,
    keep,
    adapter: step.adapter,
    model: request.model,
    settings,
    tolerateFailure: true,
  })
}

/**
 * `session.compact()`: claims the session where leases exist, loads what it needs, and
 * summarises what is older than the last `keep` messages with the active profile's settings.
 *
 * @throws {SessionStateError} when nothing is old enough; the summariser's error, having written nothing.
 */
export async function compactNow(
  core: SessionCore,
  run: SendRun,
  profile: SessionProfile,
  keepRecentMessages: number | undefined,
): Promise<AnyMessage> {
  if (core.lease) {
    await core.lease.claim()
    await core.refresh()
  }
  const messages = await core.history.load()
  const settings = compactionFor(core, profile)
  const keep = keepRecentMessages ?? settings?.keepRecentMessages ?? DEFAULT_KEEP_RECENT_MESSAGES
  const isDefault = profile.name === DEFAULT_PROFILE
  const message = await summarizeInto(core, run, {
    end: messages.length,
    keep,
    adapter: profile.adapter ?? core.adapter,
    model: (isDefault ? undefined : profile.model) ?? core.model,
    settings,
    tolerateFailure: false,
  })
  if (message === undefined) {
    throw new SessionStateError(
      `Session ${core.id} has nothing to compact: no whole turn is older than the last ${keep} messages since the latest summary (the kept part grows to whole turns, so that a question stays with its answer).`,
      { state: core.data.state },
    )
  }
  return message
}

/**
 * Summarises what is older than the last `keep` of the first `end` messages held, then persists
 * the summary, shows it (`message`, `compaction`), counts its usage, and drops the provider
 * session id (the provider's stored context is the uncompacted one). `undefined` when nothing is
 * old enough. A failing summariser writes nothing; with `tolerateFailure` (automatic compaction)
 * it does not fail the send either: it is logged, shown as `compaction-error`, and no other
 * compaction is tried in this send. A write that fails afterwards fails like any other write.
 */
async function summarizeInto(
  core: SessionCore,
  run: SendRun,
  input: {
    end: number
    keep: number
    /** The adapter of the request (the summariser unless `settings.adapter`). */
    adapter: AgentAdapter
    model: string
    settings: CompactionOptions | undefined
    tolerateFailure: boolean
  },
): Promise<AnyMessage | undefined> {
  const { settings } = input
  const plan = planCompaction(core.history.messages, input.end, input.keep)
  if (plan === undefined) return undefined
  const signal = run.controller.signal
  let summary: { text: string; usage: TokenUsage | undefined }
  try {
    summary = await summarize(plan, {
      adapter: settings?.adapter ?? input.adapter,
      model: settings?.model ?? (settings?.adapter === undefined ? input.model : ''),
      instructions: settings?.instructions ?? DEFAULT_COMPACTION_INSTRUCTIONS,
      signal,
      retry: core.options.retry,
      logger: core.options.logger,
      sessionId: core.id,
    })
  } catch (caught) {
    if (signal.aborted) throw core.abortedError(signal)
    if (!input.tolerateFailure) throw caught
    const error = core.toError(caught, signal)
    run.compactionFailed = true
    core.options.logger?.warn('agentx: compaction failed; the request goes on with the whole history', {
      sessionId: core.id,
      code: error.code,
      error: error.message,
    })
    run.emit({ type: 'compaction-error', error })
    return undefined
  }
  core.throwIfAborted(signal)
  const message = compactionMessage(
    core.id,
    core.history.nextSeq(),
    summary.text,
    plan.throughSeq,
    summary.usage,
  )
  const saved = core.append(message, run)
  if (summary.usage !== undefined) core.usage = addUsage(core.usage, summary.usage)
  delete core.data.providerSessionId
  core.forgetResumeIssuer()
  const sessionSaved = core.saveSession()
  await core.write(saved)
  await core.write(sessionSaved)
  run.emit({ type: 'compaction', message })
  return message
}

/** The persisted summary: a `system` message covering everything up to `throughSeq`. */
export function compactionMessage(
  sessionId: string,
  seq: number,
  text: string,
  throughSeq: number,
  usage: TokenUsage | undefined,
): AnyMessage {
  const message: AnyMessage = {
    id: uuidv7(),
    sessionId,
    seq,
    type: 'system',
    content: [{ type: 'text', text }],
    timestamp: new Date().toISOString(),
    compaction: { throughSeq },
  }
  if (usage !== undefined) message.usage = usage
  return message
}

/**
 * Checks `compaction` options (`AgentConfig.compaction`, `createSession({ compaction })`); throws
 * what `error` makes, naming the bad field.
 */
export function validateCompactionOptions(
  value: unknown,
  name: string,
  error: (message: string) => AgentError,
): asserts value is CompactionOptions {
  if (!isPlainObject(value)) {
    throw error(`${name} must be an object such as { thresholdTokens: 100000 }, got ${describe(value)}.`)
  }
  rejectUnknownKeys(
    value,
    ['thresholdTokens', 'keepRecentMessages', 'adapter', 'model', 'instructions'],
    `${name} option`,
    error,
  )
  if (value.thresholdTokens === undefined) throw error(`${name}.thresholdTokens is required.`)
  integer(value.thresholdTokens, `${name}.thresholdTokens`, 1, error)
  integer(value.keepRecentMessages, `${name}.keepRecentMessages`, 0, error)
  const adapter = value.adapter as Record<string, unknown> | undefined
  if (
    adapter !== undefined &&
    (typeof adapter !== 'object' ||
      adapter === null ||
      typeof adapter.getName !== 'function' ||
      typeof adapter.stream !== 'function')
  ) {
    throw error(`${name}.adapter must be an adapter (with getName and stream).`)
  }
  if (value.model !== undefined && (typeof value.model !== 'string' || value.model === '')) {
    throw error(`${name}.model must be a non-empty string, got ${describe(value.model)}.`)
  }
  if (
    value.instructions !== undefined &&
    (typeof value.instructions !== 'string' || value.instructions === '')
  ) {
    throw error(`${name}.instructions must be a non-empty string, got ${describe(value.instructions)}.`)
  }
}

/** Checks the options of `session.compact()`; throws what `error` makes. */
export function validateCompactOptions(
  value: unknown,
  error: (message: string) => AgentError,
): CompactOptions {
  if (value === undefined) return {}
  if (!isPlainObject(value)) throw error(`compact options must be an object, got ${describe(value)}.`)
  rejectUnknownKeys(value, ['keepRecentMessages', 'signal'], 'compact option', error)
  integer(value.keepRecentMessages, 'keepRecentMessages', 0, error)
  if (value.signal !== undefined && !(value.signal instanceof AbortSignal)) {
    throw error('signal must be an AbortSignal.')
  }
  return value as CompactOptions
}

function integer(value: unknown, name: string, min: number, error: (message: string) => AgentError): void {
  if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)) {
    throw error(`${name} must be an integer >= ${min}, got ${describe(value)}.`)
  }
}

/** The messages of the first `end` that come after `throughSeq`, summaries left out, as the model sees them. */
function visibleAfter(messages: readonly AnyMessage[], end: number, throughSeq: number): AnyMessage[] {
  const after: AnyMessage[] = []
  for (let i = 0; i < end; i++) {
    const message = messages[i]!
    if (message.seq > throughSeq && message.compaction === undefined) after.push(message)
  }
  return historyForModel(after, after.length)
}

/** The summary as the model sees it: introduced, so the model knows what it stands for. */
function summaryForModel(summary: AnyMessage, type: 'system' | 'user'): AnyMessage {
  return {
    ...summary,
    type,
    content: [{ type: 'text', text: `${SUMMARY_HEADER}\n\n${textOf(summary.content)}` }],
  }
}

function hasToolCalls(message: AnyMessage): boolean {
  return (
    message.type === 'agent' &&
    Array.isArray(message.content) &&
    message.content.some((block) => block.type === 'tool_use')
  )
}

/** The summariser's prompt: the previous summary, then the transcript of the messages to fold in. */
function summaryPrompt(plan: CompactionPlan): string {
  const parts: string[] = []
  if (plan.previous !== undefined) {
    parts.push(`<earlier-summary>\n${textOf(plan.previous.content)}\n</earlier-summary>`)
  }
  parts.push(`<conversation>\n${transcript(plan.messages)}\n</conversation>`)
  parts.push(
    plan.previous === undefined
      ? 'Summarise the conversation above as instructed.'
      : 'Write one summary of the earlier summary and the conversation that followed it, as instructed.',
  )
  return parts.join('\n\n')
}

/** The messages as plain text: `User:` / `Assistant:` / `Tool results:` turns. */
function transcript(messages: readonly AnyMessage[]): string {
  const names = new Map<string, string>()
  const turns: string[] = []
  for (const message of messages) {
    const speaker =
      message.type === 'user'
        ? 'User'
        : message.type === 'agent'
          ? 'Assistant'
          : message.type === 'tool'
            ? 'Tool results'
            : 'System'
    turns.push(`${speaker}:\n${contentText(message.content, names)}`)
  }
  return turns.join('\n\n')
}

function contentText(content: string | readonly ContentBlock[], names: Map<string, string>): string {
  if (typeof content === 'string') return content
  const lines: string[] = []
  for (const block of content) {
    switch (block.type) {
      case 'text':
        lines.push(block.text)
        break
      case 'image':
        lines.push('[image]')
        break
      case 'tool_use':
        names.set(block.id, block.name)
        lines.push(`[called tool ${block.name} with ${JSON.stringify(block.input) ?? 'no input'}]`)
        break
      case 'tool_result': {
        const name = names.get(block.toolUseId) ?? 'a tool'
        const status = block.isError === true ? ' (error)' : ''
        lines.push(`[result of ${name}${status}]: ${contentText(block.content, names)}`)
        break
      }
      default:
        // Thinking is the model's scratch work: left out of the summary's input.
        break
    }
  }
  return lines.join('\n')
}

function textOf(content: string | readonly ContentBlock[]): string {
  if (typeof content === 'string') return content
  let text = ''
  for (const block of content) if (block.type === 'text') text += block.text
  return text
}
