import { type AdapterMessage, isAdapterError } from '@agentx/core'
import { describeError } from '../../engine/rule-check.js'
import type { ScenarioBlock } from '../../fake-provider/scenario.js'
import { type AdapterRule, defineAdapterRule } from './define-adapter-rule.js'
import { expectSuccess, onlyMessage, runStream, summarize } from './adapter-fixtures.js'
import { TRICKY_TOOL_INPUT } from './stream-rules.js'

const group = 'Tool calls'

type ToolCallEvent = Extract<AdapterMessage, { type: 'tool-call' }>

function toolCalls(events: readonly AdapterMessage[]): ToolCallEvent[] {
  return events.filter((event): event is ToolCallEvent => event.type === 'tool-call')
}

function toolResponse(
  blocks: ScenarioBlock[],
  extra: { deltaSize?: number; interleaveToolCalls?: boolean } = {},
) {
  return {
    response: {
      blocks,
      stopReason: 'tool_use' as const,
      usage: { inputTokens: 20, outputTokens: 30 },
      ...extra,
    },
  }
}

/** Rules A-TOOL-*: assembling tool calls. */
export const toolRules: AdapterRule[] = [
  defineAdapterRule({
    id: 'A-TOOL-001',
    level: 'MUST',
    group,
    title:
      'arguments split at every character (inside escapes and multi-byte text) assemble to the parsed input, emitted once',
    requires: ['toolCalls'],
    hint: 'Concatenate the argument fragments of one call and parse once, when the call is complete; yield one tool-call per call.',
    async check(context, check) {
      context.harness.enqueue(
        toolResponse(
          [{ type: 'tool-call', id: 'call_split_1', name: 'read_file', input: TRICKY_TOOL_INPUT }],
          {
            deltaSize: 1,
          },
        ),
      )
      const events = expectSuccess(
        check,
        await runStream(context, check),
        'a tool call streamed one character at a time',
      )
      check.deepEqual(
        toolCalls(events).map(({ id, name, input }) => ({ id, name, input })),
        [{ id: 'call_split_1', name: 'read_file', input: TRICKY_TOOL_INPUT }],
        'tool-call events',
      )
      const message = onlyMessage(check, events, 'a tool call')
      const toolCallAt = events.findIndex((event) => event.type === 'tool-call')
      check.ok(
        toolCallAt < events.indexOf(message),
        'the tool-call event must come before the message event',
        {
          actual: summarize(events),
        },
      )
      const uses = message.content.filter((block) => block.type === 'tool_use')
      check.deepEqual(
        uses.map((block) =>
          block.type === 'tool_use' ? { id: block.id, name: block.name, input: block.input } : block,
        ),
        [{ id: 'call_split_1', name: 'read_file', input: TRICKY_TOOL_INPUT }],
        'tool_use blocks of the message',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-TOOL-002',
    level: 'MUST',
    group,
    title: 'parallel calls with interleaved fragments assemble independently, ids and order kept',
    requires: ['toolCalls', 'parallelToolCalls'],
    hint: 'Key partial arguments by the call’s index/id from each fragment, not by “the latest call”.',
    async check(context, check) {
      const calls = [
        { id: 'call_par_a', name: 'weather', input: { city: 'Paris', days: 3 } },
        { id: 'call_par_b', name: 'time', input: { zone: 'Asia/Tōkyō' } },
        { id: 'call_par_c', name: 'weather', input: { city: 'Zürich', units: ['C', 'F'] } },
      ]
      context.harness.enqueue(
        toolResponse(
          calls.map((call) => ({ type: 'tool-call', ...call })),
          { deltaSize: 3, interleaveToolCalls: true },
        ),
      )
      const events = expectSuccess(check, await runStream(context, check), 'three parallel tool calls')
      check.deepEqual(
        toolCalls(events).map(({ id, name, input }) => ({ id, name, input })),
        calls,
        'tool-call events, in order',
      )
      const message = onlyMessage(check, events, 'parallel tool calls')
      check.deepEqual(
        message.content.flatMap((block) =>
          block.type === 'tool_use' ? [{ id: block.id, name: block.name, input: block.input }] : [],
        ),
        calls,
        'tool_use blocks of the message, in order',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-TOOL-003',
    level: 'MUST',
    group,
    title:
      'invalid JSON arguments become a typed AdapterError or a tool call with the raw text, never a raw SyntaxError',
    requires: ['toolCalls'],
    hint: 'Catch JSON.parse errors: keep the raw text as input (the tool reports the problem) or throw an AdapterError.',
    async check(context, check) {
      const raw = '{"path": "a.txt", "mode": '
      context.harness.enqueue(
        toolResponse([{ type: 'tool-call', id: 'call_bad_1', name: 'read_file', rawArguments: raw }]),
      )
      const outcome = await runStream(context, check)
      if (outcome.failed) {
        check.ok(
          isAdapterError(outcome.error),
          'invalid tool arguments escaped as an error that is not an AdapterError',
          {
            expected: 'an AdapterError, or a tool-call carrying the raw text',
            actual: describeError(outcome.error),
          },
        )
        return
      }
      const calls = toolCalls(outcome.events)
      check.equal(calls.length, 1, 'tool-call events for one call with invalid arguments')
      check.ok(
        JSON.stringify(calls[0]?.input).includes(JSON.stringify(raw).slice(1, -1)),
        'the raw argument text was lost',
        {
          expected: `input carrying ${JSON.stringify(raw)}`,
          actual: calls[0]?.input,
        },
      )
    },
  }),
  defineAdapterRule({
    id: 'A-TOOL-004',
    level: 'MUST',
    group,
    title: 'empty arguments become {}',
    requires: ['toolCalls'],
    hint: 'A call without argument fragments (or an empty string) has the input {}.',
    async check(context, check) {
      context.harness.enqueue(
        toolResponse([{ type: 'tool-call', id: 'call_empty_1', name: 'refresh', rawArguments: '' }]),
      )
      const events = expectSuccess(check, await runStream(context, check), 'a tool call with empty arguments')
      check.deepEqual(
        toolCalls(events).map((call) => call.input),
        [{}],
        'input of the tool-call event',
      )
      const message = onlyMessage(check, events, 'a tool call with empty arguments')
      check.deepEqual(
        message.content.flatMap((block) => (block.type === 'tool_use' ? [block.input] : [])),
        [{}],
        'input of the tool_use block',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-TOOL-005',
    level: 'SHOULD',
    group,
    title: 'text before a tool call stays before it in the message content',
    requires: ['toolCalls'],
    hint: 'Build the message content in wire order.',
    async check(context, check) {
      context.harness.enqueue(
        toolResponse([
          { type: 'text', text: 'Let me look that up.' },
          { type: 'tool-call', id: 'call_order_1', name: 'lookup', input: { q: 'order' } },
        ]),
      )
      const events = expectSuccess(check, await runStream(context, check), 'text then a tool call')
      const message = onlyMessage(check, events, 'text then a tool call')
      check.deepEqual(
        message.content.map((block) => block.type),
        ['text', 'tool_use'],
        'content block types of the message',
      )
    },
  }),
]
