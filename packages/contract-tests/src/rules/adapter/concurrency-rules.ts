import type { AdapterMessage } from '@agentx/core'
import type { RuleCheck } from '../../engine/rule-check.js'
import type { Scenario } from '../../fake-provider/scenario.js'
import type { AdapterRuleContext } from './adapter-rule-context.js'
import { type AdapterRule, defineAdapterRule } from './define-adapter-rule.js'
import {
  blockText,
  deltaText,
  expectAdapterError,
  expectSuccess,
  LONG_TEXT,
  onlyMessage,
  runStream,
  textScenario,
} from './adapter-fixtures.js'

const group = 'Concurrency'

const ALPHA = 'Alpha stream: ααα — one, two, three.'
const OMEGA = 'Omega stream: ωωω — four, five, six!'

/** A response that pauses briefly mid-stream so that two of them overlap. */
function overlapping(context: AdapterRuleContext, text: string, id: string): Scenario {
  const blocks: NonNullable<Scenario['response']>['blocks'] = [{ type: 'text', text }]
  if (context.capabilities.has('toolCalls'))
    blocks.push({ type: 'tool-call', id, name: 'echo', input: { text } })
  return {
    response: {
      blocks,
      stopReason: context.capabilities.has('toolCalls') ? 'tool_use' : 'end_turn',
      deltaSize: 3,
      usage: { inputTokens: text.length, outputTokens: 11 },
    },
    delivery: { pauseBeforeFrame: 4, pauseMs: 100 },
  }
}

/** Checks that one stream is internally consistent: its deltas, message text and tool call belong together. */
function expectConsistent(check: RuleCheck, events: readonly AdapterMessage[], what: string): string {
  const text = deltaText(events)
  check.ok(text === ALPHA || text === OMEGA, `${what}: its deltas mix two responses`, {
    expected: `${JSON.stringify(ALPHA)} or ${JSON.stringify(OMEGA)}`,
    actual: text,
  })
  const message = onlyMessage(check, events, what)
  check.equal(blockText(message.content), text, `${what}: message text vs its own deltas`)
  for (const block of message.content) {
    if (block.type === 'tool_use')
      check.deepEqual(block.input, { text }, `${what}: tool input vs its own text`)
  }
  return text
}

/** Rules A-CNC-*: one adapter, several streams. */
export const concurrencyRules: AdapterRule[] = [
  defineAdapterRule({
    id: 'A-CNC-001',
    level: 'MUST',
    group,
    title: 'two concurrent streams on one adapter never cross-talk',
    hint: 'Keep all per-response state (buffers, blocks, usage) inside the stream() call, never on the instance.',
    async check(context, check) {
      context.harness.enqueue(
        overlapping(context, ALPHA, 'call_alpha'),
        overlapping(context, OMEGA, 'call_omega'),
      )
      const [first, second] = await Promise.all([
        runStream(context, check, 'first'),
        runStream(context, check, 'second'),
      ])
      const a = expectConsistent(check, expectSuccess(check, first, 'the first stream'), 'the first stream')
      const b = expectConsistent(
        check,
        expectSuccess(check, second, 'the second stream'),
        'the second stream',
      )
      check.deepEqual([a, b].sort(), [ALPHA, OMEGA].sort(), 'the texts of the two streams')
    },
  }),
  defineAdapterRule({
    id: 'A-CNC-002',
    level: 'MUST',
    group,
    title: 'one adapter serves stream after stream, also after an error and an abort',
    hint: 'Do not keep a broken client, a consumed body or an aborted controller for the next call.',
    async check(context, check) {
      context.harness.enqueue({ httpError: { kind: 'server' } })
      expectAdapterError(check, await runStream(context, check), 'the first (failing) stream')
      context.harness.enqueue(textScenario(ALPHA))
      const after = onlyMessage(
        check,
        expectSuccess(check, await runStream(context, check), 'the stream after an error'),
        'after an error',
      )
      check.equal(blockText(after.content), ALPHA, 'text of the stream after an error')
      const controller = new AbortController()
      context.harness.enqueue(
        textScenario(LONG_TEXT, { deltaSize: 2 }, { pauseBeforeFrame: 6, pauseMs: Number.POSITIVE_INFINITY }),
      )
      await runStream(context, check, 'Hello', { signal: controller.signal }, (event) => {
        if (event.type === 'text-delta') controller.abort()
      })
      context.harness.enqueue(textScenario(OMEGA))
      const last = onlyMessage(
        check,
        expectSuccess(check, await runStream(context, check), 'the stream after an abort'),
        'after an abort',
      )
      check.equal(blockText(last.content), OMEGA, 'text of the stream after an abort')
    },
  }),
  defineAdapterRule({
    id: 'A-CNC-003',
    level: 'SHOULD',
    group,
    title: 'aborting one of two concurrent streams leaves the other intact',
    hint: 'Give each stream() call its own AbortController linked to its own signal.',
    async check(context, check) {
      context.harness.enqueue(
        textScenario(LONG_TEXT, { deltaSize: 2 }, { pauseBeforeFrame: 6, pauseMs: Number.POSITIVE_INFINITY }),
        overlapping(context, ALPHA, 'call_alpha'),
      )
      const controller = new AbortController()
      const doomed = runStream(context, check, 'first', { signal: controller.signal }, (event) => {
        if (event.type === 'text-delta') controller.abort()
      })
      const survivor = runStream(context, check, 'second')
      const [aborted, intact] = await Promise.all([doomed, survivor])
      check.equal(
        expectAdapterError(check, aborted, 'the aborted stream').kind,
        'aborted',
        'kind of the aborted stream',
      )
      expectConsistent(check, expectSuccess(check, intact, 'the other stream'), 'the other stream')
    },
  }),
]
