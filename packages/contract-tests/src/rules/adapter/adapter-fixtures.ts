import { inspect } from 'node:util'
import {
  type AdapterError,
  type AdapterMessage,
  type AdapterStreamOptions,
  type AnyMessage,
  type ContentBlock,
  isAdapterError,
} from '@agentx/core'
import { describeError, type RuleCheck } from '../../engine/rule-check.js'
import type { Scenario, ScenarioResponse, ScenarioUsage } from '../../fake-provider/scenario.js'
import type { AdapterRuleContext } from './adapter-rule-context.js'

/** A `message` event. */
export type MessageEvent = Extract<AdapterMessage, { type: 'message' }>

/** What one `stream()` call produced: every event yielded, then how it ended. */
export interface StreamOutcome {
  readonly events: AdapterMessage[]
  /** Whether iteration threw (or `stream()` threw synchronously). */
  readonly failed: boolean
  readonly error: unknown
}

/** Text with multi-byte characters: accents, CJK, an emoji with a skin-tone modifier, a combining accent. */
export const MULTIBYTE_TEXT = 'Héllo, wörld — 你好 👋🏽 café e\u0301 ✓ end'

/** A plain response of `text`, streamed in deltas of `deltaSize` characters. */
export function textResponse(text: string, extra: Partial<ScenarioResponse> = {}): ScenarioResponse {
  return {
    blocks: [{ type: 'text', text }],
    stopReason: 'end_turn',
    deltaSize: 4,
    usage: { inputTokens: 25, outputTokens: 9 },
    ...extra,
  }
}

/** A scenario answering with `text`. */
export function textScenario(
  text: string,
  extra: Partial<ScenarioResponse> = {},
  delivery: Scenario['delivery'] = {},
): Scenario {
  return { response: textResponse(text, extra), delivery }
}

/** A long text (for rules that need many delta frames before a cut, a pause or an error). */
export const LONG_TEXT = 'The quick brown fox jumps over the lazy dog again.'

/** `options` for `adapter.stream` with the context's model and an empty history. */
export function streamOptions(
  context: AdapterRuleContext,
  extra: Partial<AdapterStreamOptions> = {},
): AdapterStreamOptions {
  return { model: context.model, history: [], ...extra }
}

/** How long a rule waits for a stream that should end on its own before calling it hung. */
export function watchdogMs(context: AdapterRuleContext): number {
  return context.idleTimeoutMs * 3 + 3_000
}

/**
 * Runs one `stream()` to its end, collecting events and the error. Fails the rule when the stream
 * goes {@link watchdogMs} without an event, an end or a failure (a hung adapter).
 */
export async function runStream(
  context: AdapterRuleContext,
  check: RuleCheck,
  prompt: string | ContentBlock[] = 'Hello',
  extra: Partial<AdapterStreamOptions> = {},
  onEvent?: (event: AdapterMessage, events: AdapterMessage[]) => void,
  /** How long without an event counts as hung. Default is {@link watchdogMs}. */
  limitMs: number = watchdogMs(context),
): Promise<StreamOutcome> {
  const events: AdapterMessage[] = []
  const limit = limitMs
  let timer: NodeJS.Timeout | undefined
  const hung = Symbol('hung')
  let resolveHung: (value: typeof hung) => void = () => undefined
  const watchdog = new Promise<typeof hung>((resolve) => {
    resolveHung = resolve
  })
  // An inactivity watchdog: a slow but progressing stream (one byte per write on a loaded machine)
  // is not a hung one.
  const arm = (): void => {
    clearTimeout(timer)
    timer = setTimeout(() => resolveHung(hung), limit)
  }
  arm()
  const consume = async (): Promise<StreamOutcome> => {
    try {
      for await (const event of context.adapter.stream(prompt, streamOptions(context, extra))) {
        arm()
        events.push(event)
        onEvent?.(event, events)
      }
      return { events, failed: false, error: undefined }
    } catch (error) {
      return { events, failed: true, error }
    }
  }
  try {
    const outcome = await Promise.race([consume(), watchdog])
    if (outcome === hung) {
      return check.fail(`the stream neither ended, failed nor produced an event for ${limit} ms`, {
        expected: 'the stream ends (or throws an AdapterError) on its own',
        actual: `still pending after ${events.length} event(s): ${summarize(events)}`,
      })
    }
    return outcome
  } finally {
    clearTimeout(timer)
  }
}

/** Fails unless the stream ended without an error; returns its events. */
export function expectSuccess(check: RuleCheck, outcome: StreamOutcome, what: string): AdapterMessage[] {
  if (outcome.failed) {
    check.fail(`${what}: the stream failed unexpectedly: ${describeError(outcome.error)}`, {
      expected: 'a complete stream ending with a message event',
      actual: describeError(outcome.error),
    })
  }
  return outcome.events
}

/** Fails unless the stream threw an {@link AdapterError} (by `isAdapterError`); returns it. */
export function expectAdapterError(check: RuleCheck, outcome: StreamOutcome, what: string): AdapterError {
  if (!outcome.failed) {
    return check.fail(`${what}: the stream ended without an error`, {
      expected: 'an AdapterError thrown from the iteration',
      actual: `completed with ${outcome.events.length} event(s): ${summarize(outcome.events)}`,
    })
  }
  if (!isAdapterError(outcome.error)) {
    return check.fail(`${what}: threw something that is not an AdapterError`, {
      expected: 'an AdapterError (isAdapterError(e) === true) with a kind',
      actual: describeError(outcome.error),
    })
  }
  return outcome.error
}

/** The `message` events of a stream. */
export function messagesOf(events: readonly AdapterMessage[]): MessageEvent[] {
  return events.filter((event): event is MessageEvent => event.type === 'message')
}

/** The single `message` event; fails unless there is exactly one. */
export function onlyMessage(check: RuleCheck, events: readonly AdapterMessage[], what: string): MessageEvent {
  const messages = messagesOf(events)
  if (messages.length !== 1) {
    check.fail(`${what}: expected exactly one message event`, {
      expected: 1,
      actual: `${messages.length}: ${summarize(events)}`,
    })
  }
  return messages[0] as MessageEvent
}

/** The concatenated text of the `text-delta` events. */
export function deltaText(
  events: readonly AdapterMessage[],
  type: 'text-delta' | 'thinking-delta' = 'text-delta',
): string {
  return events.map((event) => (event.type === type ? event.text : '')).join('')
}

/** The concatenated text of the text blocks of a message's content. */
export function blockText(content: readonly ContentBlock[], type: 'text' | 'thinking' = 'text'): string {
  return content.map((block) => (block.type === type ? block.text : '')).join('')
}

/** A one-line rendering of a stream for failure messages: `text-delta("He") text-delta("llo") message`. */
export function summarize(events: readonly AdapterMessage[], max = 30): string {
  const parts = events.slice(0, max).map((event) => {
    if (event.type === 'text-delta' || event.type === 'thinking-delta')
      return `${event.type}(${JSON.stringify(event.text)})`
    if (event.type === 'tool-call') return `tool-call(${event.id},${event.name})`
    if (event.type === 'message') return `message(${event.stopReason})`
    if (event.type === 'session') return `session(${event.sessionId})`
    return event.type
  })
  return parts.join(' ') + (events.length > max ? ` … (${events.length} events)` : '') || '(no events)'
}

/** Usage as an adapter must report it for a scenario's usage (only the optional parts in `parts`). */
export function expectedUsage(usage: ScenarioUsage, parts: readonly string[]): Record<string, number> {
  const out: Record<string, number> = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens }
  for (const part of ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
    const value = usage[part]
    if (parts.includes(part) && value !== undefined) out[part] = value
  }
  out.totalTokens = usage.inputTokens + usage.outputTokens
  return out
}

let messageCounter = 0

/** A persisted message for `history`. */
export function historyMessage(
  type: AnyMessage['type'],
  content: string | ContentBlock[],
  seq: number,
): AnyMessage {
  messageCounter += 1
  return {
    id: `contract-history-${messageCounter}`,
    sessionId: 'contract-session',
    seq,
    type,
    content,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
  }
}

/**
 * What counts as a trace of `secret`: the key itself, any 12 characters of its random part (an
 * error body cut short before it was redacted, a key "masked" with most of it shown), and the key
 * inside base64, base64url or hex text (a Basic authorization header, an encoded request).
 */
export function secretTraces(secret: string, fixedPrefix = ''): string[] {
  const traces = [secret]
  const random = secret.startsWith(fixedPrefix) ? secret.slice(fixedPrefix.length) : secret
  for (let start = 0; start + 12 <= random.length; start += 1) traces.push(random.slice(start, start + 12))
  for (let offset = 0; offset < 3; offset += 1) {
    // At each byte alignment, the characters that do not depend on what comes before or after.
    const bytes = Buffer.concat([Buffer.alloc(offset), Buffer.from(secret)])
    const base64 = bytes.toString('base64').slice(4, -4)
    traces.push(base64, base64.replaceAll('+', '-').replaceAll('/', '_'))
  }
  traces.push(Buffer.from(secret).toString('hex'))
  return traces
}

/** Where in `value` (an error, its cause chain, its properties) a trace of `secret` appears, if anywhere. */
export function findSecret(value: unknown, secret: string, fixedPrefix = ''): string | undefined {
  const traces = secretTraces(secret, fixedPrefix)
  const leaks = (text: string): boolean => traces.some((trace) => text.includes(trace))
  const seen = new Set<unknown>()
  const visit = (item: unknown, path: string, depth: number): string | undefined => {
    if (typeof item === 'string') return leaks(item) ? path : undefined
    if (typeof item !== 'object' || item === null || depth > 8 || seen.has(item)) return undefined
    seen.add(item)
    if (typeof (item as { entries?: unknown }).entries === 'function' && !Array.isArray(item)) {
      try {
        for (const [key, entry] of (item as { entries(): Iterable<[unknown, unknown]> }).entries()) {
          const found =
            visit(entry, `${path}.get(${String(key)})`, depth + 1) ??
            visit(String(key), `${path} key`, depth + 1)
          if (found) return found
        }
      } catch {
        // not a map-like object after all
      }
    }
    for (const key of Object.getOwnPropertyNames(item)) {
      let entry: unknown
      try {
        entry = (item as Record<string, unknown>)[key]
      } catch {
        continue
      }
      const found = visit(entry, `${path}.${key}`, depth + 1)
      if (found) return found
    }
    return undefined
  }
  const direct = visit(value, 'error', 0)
  if (direct) return direct
  let json = ''
  try {
    json = JSON.stringify(value) ?? ''
  } catch {
    json = ''
  }
  if (leaks(json)) return 'JSON.stringify(error)'
  if (leaks(inspect(value, { depth: 8 }))) return 'util.inspect(error)'
  if (leaks(String(value))) return 'String(error)'
  return undefined
}

/** Waits until the next macrotask turns have run (lets pending I/O callbacks fire). */
export async function settle(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i += 1) await new Promise<void>((resolve) => setImmediate(resolve))
}

/** Resolves after `ms`; unref'd so it never holds a process open. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}

/** Races `promise` against a deadline; resolves to `timedOut` when the deadline wins. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<{ value: T } | { timedOut: true }> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<{ timedOut: true }>((resolve) => {
    timer = setTimeout(() => resolve({ timedOut: true }), ms)
  })
  try {
    return await Promise.race([promise.then((value) => ({ value })), deadline])
  } finally {
    clearTimeout(timer)
  }
}
