import type { AdapterStreamOptions, AnyMessage, ContentBlock, ToolDefinition } from '@agentx/core'
import type { RuleCheck } from '../../engine/rule-check.js'
import type { DecodedRequest } from '../../dialects/wire-dialect.js'
import type { Scenario } from '../../fake-provider/scenario.js'
import type { AdapterRuleContext } from './adapter-rule-context.js'
import { type AdapterRule, defineAdapterRule } from './define-adapter-rule.js'
import {
  blockText,
  delay,
  expectSuccess,
  historyMessage,
  LONG_TEXT,
  runStream,
  settle,
  summarize,
  textScenario,
} from './adapter-fixtures.js'

const group = 'Requests'

const SYSTEM_PROMPT = 'You are a contract tester. Ünïcode stays ✓.'

const TOOLS: ToolDefinition[] = [
  {
    name: 'weather',
    description: 'Current weather for a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
  {
    name: 'time',
    description: 'Current time in a zone.',
    inputSchema: { type: 'object', properties: { zone: { type: 'string' } } },
  },
]

/** A 1×1 PNG and a 1×1 JPEG header, base64. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
const JPEG =
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////2wBDAf//////////////////////////////////////////////////////////////////////////////////////wAARCAABAAEDASIAAhEBAxEB/8QAFAABAAAAAAAAAAAAAAAAAAAAA//EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAMAwEAAhADEAAAAT//2Q=='

/** Streams `prompt` after `history` against one queued text answer; returns the request the server decoded. */
async function sentRequest(
  context: AdapterRuleContext,
  check: RuleCheck,
  prompt: string | ContentBlock[],
  extra: {
    history?: AnyMessage[]
    systemPrompt?: string
    tools?: ToolDefinition[]
    resume?: string
    output?: NonNullable<AdapterStreamOptions['output']>
  } = {},
): Promise<DecodedRequest> {
  context.harness.enqueue(textScenario('Noted.'))
  const before = context.harness.requests.length
  expectSuccess(
    check,
    await runStream(context, check, prompt, { history: extra.history ?? [], ...extra }),
    'a request',
  )
  const request = context.harness.requests.at(-1)
  if (!request || context.harness.requests.length === before) {
    return check.fail('the server received no request', { expected: 1, actual: 0 })
  }
  return request.decoded
}

/**
 * The output schema of A-REQ-011/012: what `SendOptions.output` of a zod or valibot object turns
 * into (nested object, array of objects, enum, a nullable field), with every property required so
 * that providers with a strict mode can use it.
 */
const OUTPUT_SCHEMA: Record<string, unknown> = {
  type: 'object',
  properties: {
    title: { type: 'string', description: 'The book title.' },
    year: { type: 'integer' },
    genre: { type: 'string', enum: ['novel', 'poetry', 'essay'] },
    authors: {
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    },
    subtitle: { type: ['string', 'null'] },
  },
  required: ['title', 'year', 'genre', 'authors', 'subtitle'],
}

/** A reply matching {@link OUTPUT_SCHEMA}, as the model streams it. */
const OUTPUT_REPLY =
  '{"title":"Dune","year":1965,"genre":"novel","authors":[{"name":"Frank Herbert"}],"subtitle":null}'

const SHAPE_KEYWORDS = ['type', 'properties', 'required', 'items', 'enum', 'const', 'anyOf']

/**
 * The part of a JSON Schema that decides the shape of a value (types, properties, required,
 * items, enum, const, anyOf), recursively. Providers may close objects
 * (`additionalProperties: false`) or move constraints into descriptions; they must keep this.
 */
function schemaShape(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(schemaShape)
  if (typeof schema !== 'object' || schema === null) return schema
  const record = schema as Record<string, unknown>
  const shape: Record<string, unknown> = {}
  for (const keyword of SHAPE_KEYWORDS) {
    const value = record[keyword]
    if (value === undefined) continue
    if (keyword === 'properties' && typeof value === 'object' && value !== null) {
      shape.properties = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, property]) => [
          name,
          schemaShape(property),
        ]),
      )
    } else if (keyword === 'required' && Array.isArray(value)) {
      shape.required = [...value].sort()
    } else if (keyword === 'items' || keyword === 'anyOf') {
      shape[keyword] = schemaShape(value)
    } else shape[keyword] = value
  }
  return shape
}

/** `{ role, text }` per message, for comparing conversations. */
function transcript(request: DecodedRequest): Array<{ role: string; text: string }> {
  return request.messages.map((message) => ({ role: message.role, text: blockText(message.content) }))
}

function allBlocks(request: DecodedRequest): Array<{ role: string; index: number; block: ContentBlock }> {
  return request.messages.flatMap((message, index) =>
    message.content.map((block) => ({ role: message.role, index, block })),
  )
}

function resultText(content: string | ContentBlock[]): string {
  return typeof content === 'string' ? content : blockText(content)
}

/** Rules A-REQ-*: what the adapter sends. */
export const requestRules: AdapterRule[] = [
  defineAdapterRule({
    id: 'A-REQ-001',
    level: 'MUST',
    group,
    title: 'constructing an adapter performs no I/O',
    hint: 'Create SDK clients lazily or without network calls; do nothing but store options in the constructor.',
    async check(context, check) {
      const before = {
        requests: context.harness.requests.length,
        unmatched: context.provider?.unmatched.length ?? 0,
      }
      await context.createAdapter()
      await context.createAdapter()
      await settle()
      await delay(50)
      check.deepEqual(
        { requests: context.harness.requests.length, unmatched: context.provider?.unmatched.length ?? 0 },
        before,
        'requests the server received after constructing adapters',
      )
      if (context.harness.openConnections !== undefined) {
        check.equal(context.harness.openConnections, 0, 'connections open after constructing adapters')
      }
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-002',
    level: 'MUST',
    group,
    title: 'the request carries the API key, the streaming flag, the model and the system prompt',
    hint: 'Send options.model and options.systemPrompt as given; stream: true.',
    async check(context, check) {
      const request = await sentRequest(context, check, 'Hello', { systemPrompt: SYSTEM_PROMPT })
      check.deepEqual(
        {
          apiKey: request.apiKey,
          stream: request.stream,
          model: request.model,
          systemPrompt: request.systemPrompt,
        },
        { apiKey: context.apiKey, stream: true, model: context.model, systemPrompt: SYSTEM_PROMPT },
        'key, stream flag, model and system prompt of the request',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-003',
    level: 'MUST',
    group,
    title: 'the history is sent in order, with the prompt last',
    hint: 'Map user → user and agent → assistant in seq order, then append the prompt.',
    async check(context, check) {
      const history = [
        historyMessage('user', 'First question?', 0),
        historyMessage('agent', [{ type: 'text', text: 'First answer — ü.' }], 1),
        historyMessage('user', [{ type: 'text', text: 'Second question?' }], 2),
        historyMessage('agent', 'Second answer 👍', 3),
      ]
      const request = await sentRequest(context, check, 'Third question?', { history })
      check.deepEqual(
        transcript(request),
        [
          { role: 'user', text: 'First question?' },
          { role: 'assistant', text: 'First answer — ü.' },
          { role: 'user', text: 'Second question?' },
          { role: 'assistant', text: 'Second answer 👍' },
          { role: 'user', text: 'Third question?' },
        ],
        'the conversation the server received',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-004',
    level: 'MUST',
    group,
    title:
      'tools are offered, and tool calls in the history are paired with their results (also when the prompt is the results)',
    requires: ['toolCalls'],
    hint: 'Send every ToolDefinition; send tool_use blocks on the assistant turn and tool_result blocks (same id) right after it.',
    async check(context, check) {
      const toolUse: ContentBlock = {
        type: 'tool_use',
        id: 'toolu_hist_1',
        name: 'weather',
        input: { city: 'Paris' },
      }
      const history = [
        historyMessage('user', 'Weather in Paris?', 0),
        historyMessage('agent', [{ type: 'text', text: 'Checking.' }, toolUse], 1),
        historyMessage(
          'tool',
          [{ type: 'tool_result', toolUseId: 'toolu_hist_1', content: '18°C, sunny' }],
          2,
        ),
        historyMessage('agent', 'It is 18°C.', 3),
      ]
      const request = await sentRequest(context, check, 'And tomorrow?', { history, tools: TOOLS })
      check.deepEqual(request.tools, ['weather', 'time'], 'tool names offered')
      const blocks = allBlocks(request)
      const use = blocks.find(({ block }) => block.type === 'tool_use')
      const result = blocks.find(({ block }) => block.type === 'tool_result')
      check.deepEqual(
        use && use.block.type === 'tool_use'
          ? { role: use.role, id: use.block.id, name: use.block.name, input: use.block.input }
          : use,
        { role: 'assistant', id: 'toolu_hist_1', name: 'weather', input: { city: 'Paris' } },
        'the tool call replayed from the history',
      )
      check.deepEqual(
        result && result.block.type === 'tool_result'
          ? {
              role: result.role,
              toolUseId: result.block.toolUseId,
              text: resultText(result.block.content),
              next: result.index === (use?.index ?? -2) + 1,
            }
          : result,
        { role: 'user', toolUseId: 'toolu_hist_1', text: '18°C, sunny', next: true },
        'the tool result replayed right after its call',
      )
      const step = await sentRequest(
        context,
        check,
        [{ type: 'tool_result', toolUseId: 'toolu_step_1', content: '{"ok":true}' }],
        {
          history: [
            historyMessage('user', 'Refresh', 0),
            historyMessage('agent', [{ type: 'tool_use', id: 'toolu_step_1', name: 'time', input: {} }], 1),
          ],
          tools: TOOLS,
        },
      )
      const last = step.messages.at(-1)
      const stepResult = last?.content.find((block) => block.type === 'tool_result')
      check.deepEqual(
        {
          role: last?.role,
          toolUseId: stepResult?.type === 'tool_result' ? stepResult.toolUseId : undefined,
        },
        { role: 'user', toolUseId: 'toolu_step_1' },
        'the last message when the prompt is a tool result',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-005',
    level: 'MUST',
    group,
    title: 'images in the history and the prompt are sent with their media type and bytes',
    requires: ['images'],
    hint: 'Map ImageBlock { mediaType, data } to the provider’s inline image part.',
    async check(context, check) {
      const history = [
        historyMessage(
          'user',
          [
            { type: 'text', text: 'What is this?' },
            { type: 'image', mediaType: 'image/png', data: PNG },
          ],
          0,
        ),
        historyMessage('agent', 'A dot.', 1),
      ]
      const request = await sentRequest(
        context,
        check,
        [
          { type: 'text', text: 'And this one?' },
          { type: 'image', mediaType: 'image/jpeg', data: JPEG },
        ],
        { history },
      )
      const images = allBlocks(request).flatMap(({ role, block }) =>
        block.type === 'image' ? [{ role, mediaType: block.mediaType, data: block.data }] : [],
      )
      check.deepEqual(
        images,
        [
          { role: 'user', mediaType: 'image/png', data: PNG },
          { role: 'user', mediaType: 'image/jpeg', data: JPEG },
        ],
        'images the server received, in order',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-006',
    level: 'SHOULD',
    group,
    title: 'thinking in the history is sent back with its signature',
    requires: ['thinking'],
    hint: 'Providers reject or ignore reasoning without its signature; replay ThinkingBlock text and signature unchanged.',
    async check(context, check) {
      const history = [
        historyMessage('user', 'Think first.', 0),
        historyMessage(
          'agent',
          [
            { type: 'thinking', text: 'Considering…', signature: 'sig-hist-123==' },
            { type: 'text', text: 'Done.' },
          ],
          1,
        ),
      ]
      const request = await sentRequest(context, check, 'Again.', { history })
      const thinking = allBlocks(request).flatMap(({ block }) =>
        block.type === 'thinking' ? [{ text: block.text, signature: block.signature }] : [],
      )
      check.deepEqual(
        thinking,
        [{ text: 'Considering…', signature: 'sig-hist-123==' }],
        'thinking blocks the server received',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-007',
    level: 'MUST',
    group,
    title:
      'the adapter never retries by itself (before or after the first event): one request per stream() call',
    hint: 'Disable the SDK’s retries (maxRetries: 0); the kernel retries, and a retry after output would duplicate it.',
    async check(context, check) {
      const failures: Array<[string, Scenario]> = [
        ['HTTP 500', { httpError: { kind: 'server' } }],
        [
          'HTTP 429 with retry-after: 0',
          { httpError: { kind: 'rate_limit', headers: { 'retry-after': '0' } } },
        ],
        [
          'a stream cut after some text',
          textScenario(LONG_TEXT, { deltaSize: 2 }, { truncateAfterFrame: 8, truncateMode: 'reset' }),
        ],
      ]
      for (const [what, failure] of failures) {
        const before = context.harness.requests.length
        // A success queued behind the failure makes a retry visible (and tempting).
        context.harness.enqueue(failure, textScenario('retried'))
        const outcome = await runStream(context, check)
        check.equal(
          context.harness.requests.length - before,
          1,
          `requests sent for one stream() call that met ${what}`,
        )
        check.ok(outcome.failed, `${what}: the stream succeeded, so it must have retried`, {
          actual: summarize(outcome.events),
        })
        // Take the unused success off the queue, so the next case starts clean.
        await runStream(context, check)
      }
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-008',
    level: 'MUST',
    group,
    title: 'the provider’s conversation id is reported as a session event',
    requires: ['providerSessionId'],
    hint: 'Yield { type: "session", sessionId } with the provider’s response/conversation id.',
    async check(context, check) {
      context.harness.enqueue(textScenario('Stateful.', { responseId: 'resp_contract_session_1' }))
      const events = expectSuccess(check, await runStream(context, check), 'a stateful response')
      check.deepEqual(
        events.flatMap((event) => (event.type === 'session' ? [event.sessionId] : [])),
        ['resp_contract_session_1'],
        'session events',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-009',
    level: 'MUST',
    group,
    title: 'with resume, the request carries the provider id and only the new input',
    requires: ['providerSessionId'],
    hint: 'Send options.resume as the provider’s previous-response id and skip the history.',
    async check(context, check) {
      const history = [
        historyMessage('user', 'Earlier question', 0),
        historyMessage('agent', 'Earlier answer', 1),
      ]
      const request = await sentRequest(context, check, 'Follow-up', {
        history,
        resume: 'resp_contract_prev_1',
      })
      check.equal(request.resume, 'resp_contract_prev_1', 'the provider id sent with resume')
      check.deepEqual(
        transcript(request),
        [{ role: 'user', text: 'Follow-up' }],
        'the input sent with resume',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-010',
    level: 'MUST',
    group,
    title: 'an unknown resume id falls back to a full replay of the history',
    requires: ['providerSessionId'],
    hint: 'When the provider says the id is unknown (expired), send the request again without it, with the whole history.',
    async check(context, check) {
      context.harness.enqueue({ httpError: { kind: 'unknown_resume' } })
      const history = [
        historyMessage('user', 'Earlier question', 0),
        historyMessage('agent', 'Earlier answer', 1),
      ]
      const request = await sentRequest(context, check, 'Follow-up', {
        history,
        resume: 'resp_contract_gone',
      })
      check.deepEqual(
        context.harness.requests.map((entry) => entry.decoded.resume),
        ['resp_contract_gone', undefined],
        'resume ids of the requests (the unknown id, then the fallback)',
      )
      check.equal(request.resume, undefined, 'the provider id of the fallback request')
      check.deepEqual(
        transcript(request),
        [
          { role: 'user', text: 'Earlier question' },
          { role: 'assistant', text: 'Earlier answer' },
          { role: 'user', text: 'Follow-up' },
        ],
        'the conversation replayed after an unknown resume id',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-011',
    level: 'MUST',
    group,
    title:
      'with output, the request asks for JSON of that schema through the provider’s structured-output field, and the JSON arrives as the reply text',
    requires: ['structuredOutput'],
    hint: 'Send options.output.schema in the provider’s native field (Anthropic output_config.format, OpenAI text.format or response_format with options.output.name, Gemini responseMimeType + responseJsonSchema); keep its types, properties, required, items and enum; stream the JSON as text, not as a tool call.',
    async check(context, check) {
      context.harness.enqueue(textScenario(OUTPUT_REPLY, { deltaSize: 7 }))
      const before = context.harness.requests.length
      const events = expectSuccess(
        check,
        await runStream(context, check, 'Extract the book: Dune (1965), a novel by Frank Herbert.', {
          output: { name: 'book', schema: structuredClone(OUTPUT_SCHEMA) },
        }),
        'a request with output',
      )
      const request = context.harness.requests.at(-1)
      if (!request || context.harness.requests.length === before)
        return check.fail('the server received no request', { expected: 1, actual: 0 })
      const output = request.decoded.output
      if (output === undefined) {
        return check.fail('the request carried no structured-output field', {
          expected: 'the schema in the provider’s native structured-output field',
          actual:
            'none (the adapter ignored options.output, or sent it in a field the provider does not read)',
        })
      }
      check.deepEqual(schemaShape(output.schema), schemaShape(OUTPUT_SCHEMA), 'the shape of the schema sent')
      if (output.name !== undefined) check.equal(output.name, 'book', 'the format name sent')
      const message = events.find((event) => event.type === 'message')
      check.deepEqual(
        {
          text: message?.type === 'message' ? blockText(message.content) : undefined,
          toolCalls: events.filter((event) => event.type === 'tool-call').length,
        },
        { text: OUTPUT_REPLY, toolCalls: 0 },
        'the reply: its JSON as the message text, no tool call',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-012',
    level: 'MUST',
    group,
    title: 'output applies only to the call that asks for it: the next call without output asks for none',
    requires: ['structuredOutput'],
    hint: 'Build the structured-output field from each call’s options.output; keep nothing of it on the adapter or its client.',
    async check(context, check) {
      const first = await sentRequest(context, check, 'As JSON, please.', {
        output: { name: 'book', schema: structuredClone(OUTPUT_SCHEMA) },
      })
      const second = await sentRequest(context, check, 'Now in prose.')
      check.deepEqual(
        { withOutput: first.output !== undefined, withoutOutput: second.output },
        { withOutput: true, withoutOutput: undefined },
        'the structured-output field of a call with output, then of a call without',
      )
    },
  }),
  defineAdapterRule({
    id: 'A-REQ-013',
    level: 'MUST',
    group,
    title:
      'a history with tool calls is replayed, and accepted, when the call offers no tools (a profile without tools after a handoff)',
    requires: ['toolCalls'],
    hint: 'Some APIs refuse tool blocks in a request that defines no tools (Anthropic answers 400): declare the tools the history used and forbid calling them (Anthropic tool_choice none).',
    async check(context, check) {
      const history = [
        historyMessage('user', 'Refund order 7', 0),
        historyMessage(
          'agent',
          [{ type: 'tool_use', id: 'toolu_handoff_1', name: 'transfer_to_billing', input: {} }],
          1,
        ),
        historyMessage(
          'tool',
          [{ type: 'tool_result', toolUseId: 'toolu_handoff_1', content: 'Transferred to billing.' }],
          2,
        ),
      ]
      const request = await sentRequest(context, check, 'Is it on its way?', { history })
      const use = allBlocks(request).find(({ block }) => block.type === 'tool_use')
      check.deepEqual(
        use?.block.type === 'tool_use' ? { role: use.role, id: use.block.id } : use,
        { role: 'assistant', id: 'toolu_handoff_1' },
        'the tool call replayed from the history',
      )
    },
  }),
]
