import type { AdapterMessage } from '@agentx/core'
import { describeError, type RuleCheck } from '../../engine/rule-check.js'
import type { ScenarioBlock, ScenarioDelivery, ScenarioResponse } from '../../fake-provider/scenario.js'
import type { AdapterRuleContext } from './adapter-rule-context.js'
import { type AdapterRule, defineAdapterRule } from './define-adapter-rule.js'
import {
  blockText,
  deltaText,
  expectSuccess,
  LONG_TEXT,
  MULTIBYTE_TEXT,
  onlyMessage,
  runStream,
  streamOptions,
  summarize,
  textScenario,
  watchdogMs,
  within,
} from './adapter-fixtures.js'

const group = 'Streaming'

/** Tool input with escapes, unicode and nesting: arguments split inside any of them must still parse. */
export const TRICKY_TOOL_INPUT: Record<string, unknown> = {
  path: 'C:\\dir\\"quoted".txt',
  emoji: '👋🏽 ünïcödé',
  nested: { list: [1, 2.5, -3, true, null], newline: 'a\nb\tc', unicodeEscape: '\u00e9\u2028' },
}

/** A response using every block type the adapter declares (text always; thinking and a tool call when declared). */
function richResponse(context: AdapterRuleContext): ScenarioResponse {
  const blocks: ScenarioBlock[] = []
  if (context.capabilities.has('thinking'))
    blocks.push({ type: 'thinking', text: 'Let me think — ü 🤔', signature: 'sig-ÄBC123==' })
  blocks.push({ type: 'text', text: MULTIBYTE_TEXT })
  if (context.capabilities.has('toolCalls'))
    blocks.push({ type: 'tool-call', id: 'call_rich_1', name: 'lookup', input: TRICKY_TOOL_INPUT })
  return {
    blocks,
    stopReason: context.capabilities.has('toolCalls') ? 'tool_use' : 'end_turn',
    usage: { inputTokens: 31, outputTokens: 17 },
    responseId: 'resp_contract_rich',
    deltaSize: 3,
  }
}

/** Events without `providerMetadata` (which may carry per-request ids) for comparing two runs. */
function comparable(events: readonly AdapterMessage[]): unknown {
  return JSON.parse(JSON.stringify(events, (key, value) => (key === 'providerMetadata' ? undefined : value)))
}

async function eventsFor(
  context: AdapterRuleContext,
  check: RuleCheck,
  delivery: ScenarioDelivery,
  what: string,
): Promise<AdapterMessage[]> {
  context.harness.enqueue({ response: richResponse(context), delivery })
  // Byte by byte, a frame that yields no event (a tool call's input, the closing usage) takes
  // hundreds of writes: on a loaded machine that is seconds of progress without an event.
  const limitMs = delivery.chunkBytes === undefined ? undefined : 30_000
  return expectSuccess(check, await runStream(context, check, 'Hello', {}, undefined, limitMs), what)
}

/** Rules A-STR-*: streaming, SSE parsing and event order. */
export const streamRules: AdapterRule[] = [
  defineAdapterRule({
    id: 'A-STR-001',
    level: 'MUST',
    group,
    title:
      'text deltas arrive in wire order and concatenate to the final text exactly, multi-byte characters included',
    hint: 'Yield one text-delta per wire delta, in order; decode UTF-8 with a streaming TextDecoder; build the message text from the same deltas.',
    async check(context, check) {
      context.harness.enqueue(textScenario(MULTIBYTE_TEXT, { deltaSize: 3 }))
      const events = expectSuccess(check, await runStream(context, check), 'a multi-byte text stream')
      const deltas = events.filter((event) => event.type === 'text-delta')
      check.ok(
        deltas.length > 1,
        'the text arrived in a single delta; it must stream as the provider sends it',
        {
          expected: 'several text-delta events',
          actual: summarize(events),
        },
      )
      check.ok(
        deltas.every((event) => event.type === 'text-delta' && event.text.length > 0),
        'a text-delta carries empty text',
        { actual: summarize(events) },
      )
      check.equal(deltaText(events), MULTIBYTE_TEXT, 'the text-deltas, concatenated')
      const message = onlyMessage(check, events, 'a text stream')
      check.equal(blockText(message.content), MULTIBYTE_TEXT, 'the text of the message event')
    },
  }),
  defineAdapterRule({
    id: 'A-STR-002',
    level: 'MUST',
    group,
    title:
      'the same response split at every byte (inside UTF-8 sequences and frames) yields the identical event sequence',
    hint: 'Buffer partial lines and partial UTF-8 sequences across network chunks (TextDecoder with { stream: true }).',
    // One write per byte is slow on a loaded machine; this rule is about correctness, not speed.
    timeoutMs: 45_000,
    async check(context, check) {
      const whole = await eventsFor(context, check, {}, 'delivered in one write per frame')
      const split = await eventsFor(context, check, { chunkBytes: 1 }, 'delivered one byte at a time')
      check.deepEqual(
        comparable(split),
        comparable(whole),
        'events of the byte-split delivery vs the whole delivery',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-STR-003',
    level: 'MUST',
    group,
    title: 'SSE grammar: CRLF line endings, comment/keep-alive lines and unknown event types change nothing',
    hint: 'Parse SSE per the WHATWG grammar: CR, LF and CRLF end lines; lines starting with ":" are comments; ignore event types you do not know.',
    async check(context, check) {
      const plain = await eventsFor(context, check, {}, 'plain LF delivery')
      const quirky = await eventsFor(
        context,
        check,
        { crlf: true, keepAlive: true, unknownFrames: true, chunkBytes: 7 },
        'CRLF, keep-alive comments, unknown events, 7-byte chunks',
      )
      check.deepEqual(
        comparable(quirky),
        comparable(plain),
        'events with CRLF/comments/unknown events vs plain delivery',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-STR-004',
    level: 'MUST',
    group,
    title: 'truly streamed: the first text-delta arrives while the server is still paused mid-response',
    hint: 'Yield each event as its frame arrives; do not read the whole body (response.text(), await finalMessage()) first.',
    async check(context, check) {
      context.harness.enqueue(
        textScenario(LONG_TEXT, { deltaSize: 2 }, { pauseBeforeFrame: 7, pauseMs: Number.POSITIVE_INFINITY }),
      )
      const iterator = context.adapter.stream('Hello', streamOptions(context))[Symbol.asyncIterator]()
      const seen: AdapterMessage[] = []
      try {
        for (;;) {
          const next = await within(iterator.next(), watchdogMs(context)).catch((error: unknown) => ({
            error,
          }))
          if ('timedOut' in next) {
            return check.fail('no text-delta arrived while the server paused mid-response', {
              expected: 'a text-delta before the response completes',
              actual: `nothing after ${summarize(seen)}`,
            })
          }
          if ('error' in next) {
            return check.fail(
              'the stream failed while the server paused mid-response, before any text-delta',
              {
                expected: 'a text-delta before the response completes (the adapter buffers the body?)',
                actual: describeError(next.error),
              },
            )
          }
          if (next.value.done)
            return check.fail('the stream ended while the server was still paused', {
              actual: summarize(seen),
            })
          seen.push(next.value.value)
          if (next.value.value.type === 'text-delta') break
        }
        check.equal(
          context.harness.requests[0]?.finished ?? false,
          false,
          'whether the server had finished its response when the first delta arrived',
        )
      } finally {
        await within(Promise.resolve(iterator.return?.()), 2_000).catch(() => undefined)
      }
    },
  }),
  defineAdapterRule({
    id: 'A-STR-005',
    level: 'MUST',
    group,
    title:
      'exactly one message event per response, after all its deltas and tool calls; iteration ends after it',
    hint: 'Emit the message event once, when the terminal frame arrives, then return.',
    async check(context, check) {
      context.harness.enqueue({ response: richResponse(context) })
      const events = expectSuccess(check, await runStream(context, check), 'a complete response')
      onlyMessage(check, events, 'one model response')
      const at = events.findIndex((event) => event.type === 'message')
      const late = events.slice(at + 1).filter((event) => event.type !== 'usage' && event.type !== 'session')
      check.deepEqual(
        late.map((event) => event.type),
        [],
        'content events after the message event',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-STR-006',
    level: 'SHOULD',
    group,
    title: 'yielded objects are fresh: mutating one changes nothing yielded later',
    hint: 'Build the message content from copies of what you yielded, not from the same objects.',
    async check(context, check) {
      const response = richResponse(context)
      context.harness.enqueue({ response })
      const outcome = await runStream(context, check, 'Hello', {}, (event) => {
        if (event.type === 'text-delta' || event.type === 'thinking-delta') event.text = 'MUTATED'
        if (event.type === 'tool-call' && typeof event.input === 'object' && event.input !== null) {
          const input = event.input as Record<string, unknown>
          input.path = 'MUTATED'
          const nested = input.nested as Record<string, unknown> | undefined
          if (nested && Array.isArray(nested.list)) nested.list.push('MUTATED')
        }
      })
      const message = onlyMessage(check, expectSuccess(check, outcome, 'a response'), 'a response')
      check.equal(
        blockText(message.content),
        MULTIBYTE_TEXT,
        'message text after mutating the yielded text-deltas',
      )
      const toolUse = message.content.find((block) => block.type === 'tool_use')
      if (context.capabilities.has('toolCalls')) {
        check.deepEqual(
          toolUse?.type === 'tool_use' ? toolUse.input : undefined,
          TRICKY_TOOL_INPUT,
          'tool_use input after mutating the tool-call event',
        )
      }
    },
  }),
  defineAdapterRule({
    id: 'A-STR-007',
    level: 'MUST',
    group,
    title:
      'thinking streams as thinking-deltas and ends up as a thinking block with its signature, before the text',
    requires: ['thinking'],
    hint: 'Map the provider thinking deltas to thinking-delta events; keep the signature on the thinking block so it can be sent back.',
    async check(context, check) {
      const thinking = 'Step 1: ü. Step 2: 🤔 — done.'
      context.harness.enqueue({
        response: {
          blocks: [
            { type: 'thinking', text: thinking, signature: 'EqQBCgIYAhIM1gbcDa9GJwZA==' },
            { type: 'text', text: 'Answer.' },
          ],
          stopReason: 'end_turn',
          deltaSize: 5,
          usage: { inputTokens: 12, outputTokens: 30 },
        },
      })
      const events = expectSuccess(check, await runStream(context, check), 'a response with thinking')
      check.equal(deltaText(events, 'thinking-delta'), thinking, 'the thinking-deltas, concatenated')
      check.equal(deltaText(events), 'Answer.', 'the text-deltas, concatenated')
      const firstText = events.findIndex((event) => event.type === 'text-delta')
      const lastThinking = events.map((event) => event.type).lastIndexOf('thinking-delta')
      check.ok(lastThinking < firstText, 'thinking-deltas must come before the text that follows them', {
        actual: summarize(events),
      })
      const message = onlyMessage(check, events, 'a response with thinking')
      const block = message.content[0]
      check.deepEqual(
        block?.type === 'thinking' ? { text: block.text, signature: block.signature } : block,
        { text: thinking, signature: 'EqQBCgIYAhIM1gbcDa9GJwZA==' },
        'the first content block (thinking, with its signature)',
      )
      check.equal(message.content[1]?.type, 'text', 'the block after the thinking')
    },
  }),
]
