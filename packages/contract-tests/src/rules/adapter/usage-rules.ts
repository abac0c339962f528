import type { AdapterMessage, StopReason, TokenUsage } from '@agentx/core'
import type { RuleCheck } from '../../engine/rule-check.js'
import type { ScenarioResponse, ScenarioUsage } from '../../fake-provider/scenario.js'
import type { AdapterRuleContext } from './adapter-rule-context.js'
import { type AdapterRule, defineAdapterRule } from './define-adapter-rule.js'
import {
  expectedUsage,
  expectSuccess,
  onlyMessage,
  runStream,
  summarize,
  textResponse,
} from './adapter-fixtures.js'

const usageGroup = 'Usage'
const stopGroup = 'Stop reasons'

/** Provider numbers with every optional part set. */
const FULL_USAGE: ScenarioUsage = {
  inputTokens: 1_250,
  outputTokens: 430,
  cacheReadTokens: 800,
  cacheWriteTokens: 150,
  reasoningTokens: 120,
}

function usageEvents(events: readonly AdapterMessage[]): TokenUsage[] {
  return events.flatMap((event) => (event.type === 'usage' ? [event.usage] : []))
}

/** Streams `response` and returns the one usage event (failing unless there is exactly one). */
async function reportedUsage(
  context: AdapterRuleContext,
  check: RuleCheck,
  response: ScenarioResponse,
  what: string,
): Promise<TokenUsage> {
  context.harness.enqueue({ response })
  const events = expectSuccess(check, await runStream(context, check), what)
  const usages = usageEvents(events)
  if (usages.length !== 1) {
    check.fail(`${what}: expected exactly one usage event`, {
      expected: 1,
      actual: `${usages.length}: ${summarize(events)}`,
    })
  }
  return usages[0] as TokenUsage
}

/** The usage parts a rule can expect from this harness's protocol. */
function usageParts(context: AdapterRuleContext): readonly string[] {
  return context.harness.dialect?.usageParts ?? []
}

function pick(usage: TokenUsage, keys: readonly string[]): Record<string, unknown> {
  const record = usage as unknown as Record<string, unknown>
  return Object.fromEntries(keys.filter((key) => key in record).map((key) => [key, record[key]]))
}

async function stopReasonFor(
  context: AdapterRuleContext,
  check: RuleCheck,
  response: ScenarioResponse,
  what: string,
): Promise<{ stopReason: StopReason | undefined; message: AdapterMessage }> {
  context.harness.enqueue({ response })
  const events = expectSuccess(check, await runStream(context, check), what)
  const message = onlyMessage(check, events, what)
  return { stopReason: message.stopReason, message }
}

/** Rules A-USG-* and A-FIN-*: usage numbers and stop reasons. */
export const usageRules: AdapterRule[] = [
  defineAdapterRule({
    id: 'A-USG-001',
    level: 'MUST',
    group: usageGroup,
    title:
      'one usage event per response with the provider’s input, output and cache numbers; total = input + output',
    requires: ['usage'],
    hint: 'inputTokens counts all input, cached included (Anthropic: input + cache read + cache creation); totalTokens is their sum.',
    async check(context, check) {
      const usage = await reportedUsage(
        context,
        check,
        textResponse('Counted.', { usage: FULL_USAGE }),
        'a response with usage',
      )
      const parts = usageParts(context).filter((part) => part !== 'reasoningTokens')
      const expected = expectedUsage(FULL_USAGE, parts)
      delete expected.reasoningTokens
      const keys = ['inputTokens', 'outputTokens', 'totalTokens', ...parts]
      check.deepEqual(
        pick(usage, keys),
        expected,
        'reported usage (input, output, total and the cache parts)',
      )
      for (const [key, value] of Object.entries(usage)) {
        check.ok(Number.isInteger(value) && value >= 0, `usage.${key} is not a non-negative integer`, {
          actual: value,
        })
      }
    },
  }),
  defineAdapterRule({
    id: 'A-USG-002',
    level: 'MUST',
    group: usageGroup,
    title: 'usage the provider does not send is absent: no usage event with 0 or NaN',
    hint: 'Only yield a usage event when the provider reported numbers.',
    async check(context, check) {
      const response = textResponse('No usage here.')
      delete response.usage
      context.harness.enqueue({ response })
      const events = expectSuccess(check, await runStream(context, check), 'a response without usage')
      check.deepEqual(usageEvents(events), [], 'usage events for a response the provider sent no usage for')
    },
  }),
  defineAdapterRule({
    id: 'A-USG-003',
    level: 'MUST',
    group: usageGroup,
    title: 'usage that arrives in a trailing frame without content is captured',
    requires: ['usage'],
    hint: 'Keep reading after the last content frame; take the final (cumulative) usage from the trailing frame.',
    async check(context, check) {
      const usage = await reportedUsage(
        context,
        check,
        textResponse('Trailing usage.', {
          usage: { inputTokens: 42, outputTokens: 7 },
          usageInTrailingFrame: true,
        }),
        'a response with usage in a trailing frame',
      )
      check.deepEqual(
        pick(usage, ['inputTokens', 'outputTokens', 'totalTokens']),
        { inputTokens: 42, outputTokens: 7, totalTokens: 49 },
        'usage from the trailing frame',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-USG-004',
    level: 'SHOULD',
    group: usageGroup,
    title: 'reasoning tokens are reported as a part of outputTokens when the provider gives them',
    requires: ['usage'],
    hint: 'Map the provider’s thinking/reasoning token count to reasoningTokens; do not add it to outputTokens twice.',
    async check(context, check) {
      if (!usageParts(context).includes('reasoningTokens')) return
      const usage = await reportedUsage(
        context,
        check,
        textResponse('Reasoned.', { usage: FULL_USAGE }),
        'a response with usage',
      )
      check.equal(usage.reasoningTokens, FULL_USAGE.reasoningTokens, 'usage.reasoningTokens')
      check.equal(usage.outputTokens, FULL_USAGE.outputTokens, 'usage.outputTokens (reasoning included once)')
    },
  }),
  defineAdapterRule({
    id: 'A-FIN-001',
    level: 'MUST',
    group: stopGroup,
    title: 'end of turn and the output limit map to end_turn and max_tokens',
    hint: 'Map every provider stop/finish reason onto the StopReason union of @agentx/core.',
    async check(context, check) {
      for (const stop of ['end_turn', 'max_tokens'] as const) {
        const { stopReason } = await stopReasonFor(
          context,
          check,
          textResponse('Stop.', { stopReason: stop }),
          stop,
        )
        check.equal(stopReason, stop, `stopReason of a response that ended with ${stop}`)
      }
    },
  }),
  defineAdapterRule({
    id: 'A-FIN-002',
    level: 'MUST',
    group: stopGroup,
    title: 'a response that calls a tool ends with stopReason tool_use',
    requires: ['toolCalls'],
    hint: 'Map the provider’s tool-call finish reason to tool_use.',
    async check(context, check) {
      const { stopReason } = await stopReasonFor(
        context,
        check,
        {
          blocks: [{ type: 'tool-call', id: 'call_fin_1', name: 'lookup', input: { q: 'x' } }],
          stopReason: 'tool_use',
          usage: { inputTokens: 5, outputTokens: 5 },
        },
        'a tool call',
      )
      check.equal(stopReason, 'tool_use', 'stopReason of a tool-call response')
    },
  }),
  defineAdapterRule({
    id: 'A-FIN-003',
    level: 'SHOULD',
    group: stopGroup,
    title: 'a refusal or content filter maps to content_filter',
    hint: 'Anthropic refusal, OpenAI content_filter, Gemini SAFETY and the like are content_filter.',
    async check(context, check) {
      const { stopReason } = await stopReasonFor(
        context,
        check,
        textResponse('I can’t help with that.', { stopReason: 'content_filter' }),
        'a filtered response',
      )
      check.equal(stopReason, 'content_filter', 'stopReason of a filtered response')
    },
  }),
  defineAdapterRule({
    id: 'A-FIN-004',
    level: 'MUST',
    group: stopGroup,
    title: 'an unknown stop reason becomes other, without an error',
    hint: 'Providers add stop reasons; map what you do not know to other instead of throwing or guessing.',
    async check(context, check) {
      const { stopReason } = await stopReasonFor(
        context,
        check,
        textResponse('Paused.', { stopReason: 'other', rawStopReason: 'agentx_future_reason' }),
        'an unknown stop reason',
      )
      check.equal(stopReason, 'other', 'stopReason for the raw reason agentx_future_reason')
    },
  }),
  defineAdapterRule({
    id: 'A-FIN-005',
    level: 'SHOULD',
    group: stopGroup,
    title: 'the raw value of an unknown stop reason is kept in the message (providerMetadata)',
    hint: 'Keep the provider’s own reason, e.g. providerMetadata: { <provider>: { stopReason } } on the content.',
    async check(context, check) {
      const { message } = await stopReasonFor(
        context,
        check,
        textResponse('Paused.', { stopReason: 'other', rawStopReason: 'agentx_future_reason' }),
        'an unknown stop reason',
      )
      check.ok(
        JSON.stringify(message).includes('agentx_future_reason'),
        'the raw stop reason is not in the message event',
        {
          expected: 'agentx_future_reason somewhere in the message (providerMetadata)',
          actual: message,
        },
      )
    },
  }),
]
