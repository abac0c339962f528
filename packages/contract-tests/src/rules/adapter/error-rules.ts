import { type AdapterErrorKind, isAdapterError } from '@agentx/core'
import { describeError, type RuleCheck } from '../../engine/rule-check.js'
import type { Scenario, ScenarioError } from '../../fake-provider/scenario.js'
import { type AdapterRuleContext, CONTRACT_KEY_PREFIX } from './adapter-rule-context.js'
import { type AdapterRule, defineAdapterRule } from './define-adapter-rule.js'
import {
  deltaText,
  expectAdapterError,
  findSecret,
  LONG_TEXT,
  messagesOf,
  runStream,
  type StreamOutcome,
  summarize,
  textScenario,
} from './adapter-fixtures.js'

const group = 'Errors'

async function failWith(
  context: AdapterRuleContext,
  check: RuleCheck,
  scenario: Scenario,
): Promise<StreamOutcome> {
  context.harness.enqueue(scenario)
  return runStream(context, check)
}

/** The HTTP errors every adapter maps, with the kind and retryable flag DESIGN.md requires. */
const HTTP_CASES: Array<{ error: ScenarioError; kind: AdapterErrorKind; retryable: boolean; label: string }> =
  [
    {
      label: '400',
      error: { kind: 'invalid_request', status: 400 },
      kind: 'invalid_request',
      retryable: false,
    },
    {
      label: '401',
      error: { kind: 'authentication', status: 401 },
      kind: 'authentication',
      retryable: false,
    },
    { label: '403', error: { kind: 'permission', status: 403 }, kind: 'permission', retryable: false },
    { label: '404', error: { kind: 'not_found', status: 404 }, kind: 'not_found', retryable: false },
    { label: '429', error: { kind: 'rate_limit', status: 429 }, kind: 'rate_limit', retryable: true },
    { label: '500', error: { kind: 'server', status: 500 }, kind: 'server', retryable: true },
    { label: 'overloaded', error: { kind: 'overloaded' }, kind: 'overloaded', retryable: true },
  ]

/** Statuses whose retryable flag DESIGN.md fixes (kinds vary by provider for these). */
const RETRYABLE_STATUSES: Array<{ status: number; kind: ScenarioError['kind']; retryable: boolean }> = [
  { status: 408, kind: 'server', retryable: true },
  { status: 409, kind: 'server', retryable: true },
  { status: 502, kind: 'server', retryable: true },
  { status: 503, kind: 'overloaded', retryable: true },
  { status: 504, kind: 'server', retryable: true },
]

/** A text response long enough that a cut or an error after frame 8 lands among its deltas. */
function longText(delivery: Scenario['delivery'], streamError?: ScenarioError): Scenario {
  const scenario = textScenario(LONG_TEXT, { deltaSize: 2 }, delivery)
  if (streamError) scenario.streamError = streamError
  return scenario
}

/** Rules A-ERR-*: typed errors, retryability, broken streams, secrets, timeouts. */
export const errorRules: AdapterRule[] = [
  defineAdapterRule({
    id: 'A-ERR-001',
    level: 'MUST',
    group,
    title:
      'HTTP errors map to kinds: 400 invalid_request, 401 authentication, 403 permission, 404 not_found, 429 rate_limit, 5xx server, overloaded',
    hint: 'Map by status first (adapterErrorKindFromStatus in @agentx/core), then refine with the provider’s error type; keep status.',
    async check(context, check) {
      for (const entry of HTTP_CASES) {
        const error = expectAdapterError(
          check,
          await failWith(context, check, { httpError: entry.error }),
          `HTTP ${entry.label}`,
        )
        check.equal(error.kind, entry.kind, `kind for HTTP ${entry.label}`)
        if (entry.error.status !== undefined)
          check.equal(error.status, entry.error.status, `status for HTTP ${entry.label}`)
      }
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-002',
    level: 'MUST',
    group,
    title: 'retryable is true for 408, 409, 429, 5xx and overloaded, false for 400, 401, 403 and 404',
    hint: 'Use isRetryableStatus from @agentx/core; the kernel retries only what is retryable.',
    async check(context, check) {
      for (const entry of HTTP_CASES) {
        const error = expectAdapterError(
          check,
          await failWith(context, check, { httpError: entry.error }),
          `HTTP ${entry.label}`,
        )
        check.equal(error.retryable, entry.retryable, `retryable for HTTP ${entry.label}`)
      }
      for (const entry of RETRYABLE_STATUSES) {
        const scenario: Scenario = { httpError: { kind: entry.kind, status: entry.status } }
        const error = expectAdapterError(
          check,
          await failWith(context, check, scenario),
          `HTTP ${entry.status}`,
        )
        check.equal(error.retryable, entry.retryable, `retryable for HTTP ${entry.status}`)
      }
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-003',
    level: 'MUST',
    group,
    title: 'retryAfterMs comes from a Retry-After header in seconds',
    hint: 'Use parseRetryAfterMs(headers) from @agentx/core.',
    async check(context, check) {
      const scenario: Scenario = { httpError: { kind: 'rate_limit', headers: { 'retry-after': '7' } } }
      const error = expectAdapterError(
        check,
        await failWith(context, check, scenario),
        '429 with retry-after: 7',
      )
      check.equal(error.kind, 'rate_limit', 'kind')
      check.equal(error.retryAfterMs, 7_000, 'retryAfterMs for retry-after: 7')
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-004',
    level: 'MUST',
    group,
    title: 'retryAfterMs comes from a Retry-After header in HTTP-date form',
    hint: 'Retry-After may be an HTTP date: wait until then (parseRetryAfterMs handles both forms).',
    async check(context, check) {
      const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 30_000)
      const scenario: Scenario = {
        httpError: { kind: 'rate_limit', headers: { 'retry-after': at.toUTCString() } },
      }
      const error = expectAdapterError(
        check,
        await failWith(context, check, scenario),
        '429 with an HTTP-date retry-after',
      )
      const wait = error.retryAfterMs
      check.ok(
        typeof wait === 'number' && wait > 20_000 && wait <= 31_000,
        'retryAfterMs does not match the HTTP date',
        {
          expected: `about 30000 (until ${at.toUTCString()})`,
          actual: wait,
        },
      )
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-005',
    level: 'MUST',
    group,
    title:
      'an error frame mid-stream: the earlier deltas are delivered, then a typed error of the right kind',
    hint: 'Yield deltas as they come; turn the provider’s in-stream error event into an AdapterError (overloaded → overloaded, server error → server).',
    async check(context, check) {
      for (const kind of ['overloaded', 'server'] as const) {
        const outcome = await failWith(context, check, longText({ errorFrameAfter: 8 }, { kind }))
        const error = expectAdapterError(check, outcome, `an in-stream ${kind} error`)
        const text = deltaText(outcome.events)
        check.ok(
          text.length > 0 && LONG_TEXT.startsWith(text),
          'the deltas before the error frame were not delivered',
          {
            expected: `a non-empty prefix of ${JSON.stringify(LONG_TEXT)}`,
            actual: summarize(outcome.events),
          },
        )
        check.deepEqual(messagesOf(outcome.events), [], 'message events of a failed response')
        check.equal(error.kind, kind, `kind of an in-stream ${kind} error`)
        check.equal(error.retryable, true, `retryable of an in-stream ${kind} error`)
      }
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-006',
    level: 'MUST',
    group,
    title: 'a stream cut before its terminal frame is a retryable network error, never a success',
    hint: 'Remember whether the terminal frame arrived; if the body ends (or resets) without it, throw AdapterError kind network.',
    async check(context, check) {
      for (const truncateMode of ['end', 'reset'] as const) {
        const outcome = await failWith(context, check, longText({ truncateAfterFrame: 8, truncateMode }))
        const error = expectAdapterError(check, outcome, `a stream cut after 8 frames (${truncateMode})`)
        check.deepEqual(messagesOf(outcome.events), [], `message events of a cut stream (${truncateMode})`)
        check.equal(error.kind, 'network', `kind for a cut stream (${truncateMode})`)
        check.equal(error.retryable, true, `retryable for a cut stream (${truncateMode})`)
      }
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-007',
    level: 'MUST',
    group,
    title: 'a malformed frame is a typed AdapterError, not a raw SyntaxError and not a success',
    hint: 'Wrap JSON.parse of each frame; throw an AdapterError with the parse error as cause.',
    async check(context, check) {
      const outcome = await failWith(context, check, longText({ malformedFrame: 5 }))
      if (!outcome.failed) {
        check.fail('a malformed frame was skipped: the stream completed', {
          expected: 'an AdapterError',
          actual: summarize(outcome.events),
        })
      }
      check.ok(
        isAdapterError(outcome.error),
        'a malformed frame escaped as an error that is not an AdapterError',
        {
          actual: describeError(outcome.error),
        },
      )
      check.deepEqual(messagesOf(outcome.events), [], 'message events after a malformed frame')
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-008',
    level: 'SHOULD',
    group,
    title: 'the error for a malformed frame carries an excerpt of the frame in its cause',
    hint: 'Put the first ~100 characters of the bad data in the cause, so a user can report it.',
    async check(context, check) {
      const outcome = await failWith(context, check, longText({ malformedFrame: 5 }))
      const error = expectAdapterError(check, outcome, 'a malformed frame')
      const malformed = context.harness.dialect?.encodeMalformedFrame()
      const data = /data: ?(.*)/.exec(malformed ?? '')?.[1] ?? ''
      const excerpt = data.slice(0, 16)
      const chain: string[] = []
      for (let cause: unknown = error.cause, depth = 0; cause !== undefined && depth < 5; depth += 1) {
        chain.push(cause instanceof Error ? cause.message : String(cause))
        cause = cause instanceof Error ? cause.cause : undefined
      }
      const text = chain.join('\n')
      check.ok(
        excerpt !== '' && (text.includes(excerpt) || text.includes(JSON.stringify(excerpt).slice(1, -1))),
        'no excerpt of the malformed frame in the error’s cause chain',
        { expected: `a cause mentioning ${JSON.stringify(excerpt)}`, actual: text || '(no cause)' },
      )
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-009',
    level: 'MUST',
    group,
    title:
      'the API key, or any part or encoding of it, never appears in the message, stack, cause, properties or JSON of any error',
    hint: 'Redact the key from provider messages and from any SDK error you keep as cause (request headers included), before cutting any text short; no part of it, and no base64 or hex of it, may show.',
    async check(context, check) {
      const key = context.apiKey
      const scenarios: Array<[string, Scenario]> = [
        [
          '401 echoing the key',
          { httpError: { kind: 'authentication', message: `Invalid API key: ${key}` } },
        ],
        [
          '400 echoing the key',
          { httpError: { kind: 'invalid_request', message: `bad header x-api-key=${key}` } },
        ],
        [
          'an in-stream error echoing the key',
          longText({ errorFrameAfter: 8 }, { kind: 'server', message: `key ${key} rejected` }),
        ],
        // A long body with the key all through it: an adapter that cuts the text before redacting
        // it leaves the part of a key that straddles the cut. Two phases, so that one of them
        // puts a key across any cut.
        ...[0, 27].map((shift): [string, Scenario] => [
          `400 echoing the key all through a long message (shift ${shift})`,
          {
            httpError: {
              kind: 'invalid_request',
              message: `${'.'.repeat(shift)}${`bad key ${key}; `.repeat(60)}`,
            },
          },
        ]),
        ['a malformed frame', longText({ malformedFrame: 5 })],
        ['a cut stream', longText({ truncateAfterFrame: 8, truncateMode: 'reset' })],
      ]
      for (const [what, scenario] of scenarios) {
        const outcome = await failWith(context, check, scenario)
        check.ok(outcome.failed, `${what}: the stream did not fail`, { actual: summarize(outcome.events) })
        const where = findSecret(outcome.error, key, CONTRACT_KEY_PREFIX)
        check.ok(where === undefined, `${what}: the API key appears in the error at ${where}`, {
          expected: 'no trace of the API key',
          actual: where,
        })
      }
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-010',
    level: 'MUST',
    group,
    title: 'a stalled stream fails with kind timeout after the idle timeout and releases the connection',
    hint: 'Re-arm an idle timer on every chunk; when it fires, abort the request and throw AdapterError kind timeout.',
    async check(context, check) {
      const outcome = await failWith(
        context,
        check,
        longText({ pauseBeforeFrame: 6, pauseMs: Number.POSITIVE_INFINITY }),
      )
      const error = expectAdapterError(check, outcome, 'a stream that stalls mid-response')
      check.equal(error.kind, 'timeout', 'kind for a stalled stream')
      check.equal(error.retryable, true, 'retryable for a stalled stream')
      try {
        await context.harness.waitForDisconnect(2_000)
      } catch {
        check.fail('the connection of the stalled stream is still open', {
          expected: 'the client closes the connection when it times out',
          actual: `disconnects = ${context.harness.disconnects}`,
        })
      }
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-011',
    level: 'MUST',
    group,
    title: 'every error is an AdapterError whose provider is the adapter’s getName()',
    hint: 'Set provider: this.getName() on every AdapterError; map SDK and network errors, never let them escape.',
    async check(context, check) {
      const name = context.adapter.getName()
      const scenarios: Array<[string, Scenario]> = [
        ['HTTP 500', { httpError: { kind: 'server' } }],
        ['HTTP 401', { httpError: { kind: 'authentication' } }],
        ['an in-stream error', longText({ errorFrameAfter: 8 }, { kind: 'server' })],
        ['a cut stream', longText({ truncateAfterFrame: 8, truncateMode: 'reset' })],
      ]
      for (const [what, scenario] of scenarios) {
        const error = expectAdapterError(check, await failWith(context, check, scenario), what)
        check.equal(error.provider, name, `provider of the error for ${what}`)
      }
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-012',
    level: 'SHOULD',
    group,
    title: 'retryAfterMs comes from a retry-after-ms header when the provider sends one',
    hint: 'retry-after-ms (milliseconds) is more precise than retry-after; parseRetryAfterMs reads it first.',
    async check(context, check) {
      const scenario: Scenario = {
        httpError: { kind: 'rate_limit', headers: { 'retry-after-ms': '1500', 'retry-after': '2' } },
      }
      const error = expectAdapterError(
        check,
        await failWith(context, check, scenario),
        '429 with retry-after-ms: 1500',
      )
      check.equal(error.retryAfterMs, 1_500, 'retryAfterMs for retry-after-ms: 1500')
    },
  }),
  defineAdapterRule({
    id: 'A-ERR-013',
    level: 'MUST',
    group,
    title:
      'the provider’s own invalid-key answer is kind authentication and not retryable, whatever its status',
    hint: 'Some providers answer a bad key with 400 (Gemini API_KEY_INVALID): look at the error body, not only the status.',
    async check(context, check) {
      const error = expectAdapterError(
        check,
        await failWith(context, check, { httpError: { kind: 'authentication' } }),
        'an invalid key',
      )
      check.deepEqual(
        { kind: error.kind, retryable: error.retryable },
        { kind: 'authentication', retryable: false },
        'kind and retryable for an invalid key',
      )
    },
  }),
]
