import {
  AdapterError,
  type AdapterMessage,
  type AdapterStreamOptions,
  type AgentAdapter,
  type ContentBlock,
  isAdapterError,
} from '@agentx/core'
import type { AdapterFactoryContext } from '../rules/adapter/adapter-harness.js'
import { type ReferenceAdapterDefects, ReferenceAnthropicAdapter } from './reference-anthropic-adapter.js'
import { ReferenceResponsesAdapter } from './reference-responses-adapter.js'

/**
 * A deliberately broken adapter: the reference adapter with exactly one defect. The kit's
 * meta-test runs the rules in `catches` against each variant to prove the rules catch real bugs.
 */
export interface BrokenAdapterVariant {
  /** Short kebab-case name, e.g. `ignores-abort`. */
  readonly name: string
  /** The defect, in words. */
  readonly defect: string
  /** Rule ids that must fail for this variant. */
  readonly catches: readonly string[]
  /** Makes the broken adapter. */
  create(context: AdapterFactoryContext): AgentAdapter
}

type Transform = (
  events: AsyncIterable<AdapterMessage>,
  context: AdapterFactoryContext,
) => AsyncGenerator<AdapterMessage>

function reference(
  context: AdapterFactoryContext,
  defects: ReferenceAdapterDefects = {},
): ReferenceAnthropicAdapter {
  return new ReferenceAnthropicAdapter({ ...context, defects })
}

/** A variant built from one internal defect of the reference adapter. */
function withDefect(
  name: string,
  defect: string,
  catches: readonly string[],
  defects: ReferenceAdapterDefects,
): BrokenAdapterVariant {
  return { name, defect, catches, create: (context) => reference(context, defects) }
}

/** A variant whose output stream (events and errors) passes through `transform`. */
function withTransform(
  name: string,
  defect: string,
  catches: readonly string[],
  transform: Transform,
): BrokenAdapterVariant {
  return {
    name,
    defect,
    catches,
    create(context) {
      const inner = reference(context)
      return {
        getName: () => inner.getName(),
        stream: (prompt: string | ContentBlock[], options: AdapterStreamOptions) =>
          transform(inner.stream(prompt, options), context),
      }
    },
  }
}

/** Rethrows every AdapterError after `change` rewrites it. */
function mapErrors(change: (error: AdapterError, context: AdapterFactoryContext) => unknown): Transform {
  return async function* (events, context) {
    try {
      yield* events
    } catch (error) {
      throw isAdapterError(error) ? change(error, context) : error
    }
  }
}

function copyError(
  error: AdapterError,
  overrides: Partial<{
    message: string
    kind: AdapterError['kind']
    retryable: boolean
    provider: string
  }> & { dropRetryAfter?: boolean },
): AdapterError {
  return new AdapterError(overrides.message ?? error.message, {
    kind: overrides.kind ?? error.kind,
    provider: overrides.provider ?? error.provider,
    retryable: overrides.retryable ?? error.retryable,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined || overrides.dropRetryAfter
      ? {}
      : { retryAfterMs: error.retryAfterMs }),
    cause: error.cause,
  })
}

/** Every broken variant, one defect each. */
export const brokenAdapterVariants: readonly BrokenAdapterVariant[] = [
  withTransform(
    'drops-delta-order',
    'swaps neighbouring text deltas',
    ['A-STR-001'],
    async function* (events) {
      let held: AdapterMessage | undefined
      for await (const event of events) {
        if (event.type !== 'text-delta') {
          if (held) yield held
          held = undefined
          yield event
        } else if (held) {
          yield event
          yield held
          held = undefined
        } else held = event
      }
      if (held) yield held
    },
  ),
  withDefect(
    'naive-sse-parser',
    'splits frames on \\n\\n only and decodes each chunk alone',
    ['A-STR-002', 'A-STR-003'],
    {
      naiveSse: true,
    },
  ),
  withDefect('buffers-body', 'reads the whole body before yielding anything', ['A-STR-004'], {
    buffersBody: true,
  }),
  withTransform(
    'emits-message-twice',
    'yields the message event twice',
    ['A-STR-005'],
    async function* (events) {
      for await (const event of events) {
        yield event
        if (event.type === 'message') yield { ...event }
      }
    },
  ),
  withDefect('thinking-as-text', 'reports thinking as text', ['A-STR-007'], { thinkingAsText: true }),
  withDefect(
    'ignores-abort',
    'never looks at the abort signal',
    ['A-ABT-001', 'A-ABT-002', 'A-ABT-003', 'A-ABT-005'],
    {
      ignoresAbort: true,
    },
  ),
  withDefect('sends-when-aborted', 'sends the request before looking at an aborted signal', ['A-ABT-001'], {
    sendsWhenAborted: true,
  }),
  withDefect(
    'leaves-connection-open',
    'leaves the connection open when iteration stops early',
    ['A-ABT-004'],
    {
      leavesConnectionOpen: true,
    },
  ),
  withDefect('excludes-cache-from-input', 'reports input tokens without the cached parts', ['A-USG-001'], {
    excludesCacheFromInput: true,
  }),
  withTransform(
    'fabricates-usage',
    'reports usage 0 when the provider sent none',
    ['A-USG-002'],
    async function* (events) {
      let sawUsage = false
      for await (const event of events) {
        if (event.type === 'usage') sawUsage = true
        yield event
      }
      if (!sawUsage) yield { type: 'usage', usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } }
    },
  ),
  withDefect('ignores-trailing-usage', 'reads usage only from the first frame', ['A-USG-001', 'A-USG-003'], {
    ignoresTrailingUsage: true,
  }),
  withTransform(
    'always-end-turn',
    'reports every stop reason as end_turn',
    ['A-FIN-001', 'A-FIN-002'],
    async function* (events) {
      for await (const event of events)
        yield event.type === 'message' ? { ...event, stopReason: 'end_turn' } : event
    },
  ),
  withDefect('rejects-unknown-stop', 'throws on a stop reason it does not know', ['A-FIN-004'], {
    rejectsUnknownStop: true,
  }),
  withTransform(
    'emits-tool-call-twice',
    'yields every tool call twice',
    ['A-TOOL-001'],
    async function* (events) {
      for await (const event of events) {
        yield event
        if (event.type === 'tool-call') yield { ...event }
      }
    },
  ),
  withDefect('mixes-tool-fragments', 'appends argument fragments to the latest call', ['A-TOOL-002'], {
    mixesToolFragments: true,
  }),
  withDefect('throws-syntax-error', 'lets JSON.parse fail on invalid tool arguments', ['A-TOOL-003'], {
    throwsSyntaxError: true,
  }),
  withTransform(
    'empty-args-as-string',
    'turns empty tool arguments into an empty string',
    ['A-TOOL-004'],
    async function* (events) {
      const empty = (input: unknown): boolean =>
        typeof input === 'object' &&
        input !== null &&
        !Array.isArray(input) &&
        Object.keys(input).length === 0
      for await (const event of events) {
        if (event.type === 'tool-call' && empty(event.input)) yield { ...event, input: '' }
        else if (event.type === 'message') {
          yield {
            ...event,
            content: event.content.map((block) =>
              block.type === 'tool_use' && empty(block.input) ? { ...block, input: '' } : block,
            ),
          }
        } else yield event
      }
    },
  ),
  withTransform(
    'wrong-error-kinds',
    'reports every error as kind unknown',
    ['A-ERR-001', 'A-ERR-005', 'A-ERR-006', 'A-ERR-013'],
    mapErrors((error) => copyError(error, { kind: 'unknown' })),
  ),
  withTransform(
    'everything-retryable',
    'marks every error retryable',
    ['A-ERR-002'],
    mapErrors((error) => copyError(error, { retryable: true })),
  ),
  withTransform(
    'no-retry-after',
    'drops retryAfterMs',
    ['A-ERR-003', 'A-ERR-004'],
    mapErrors((error) => copyError(error, { dropRetryAfter: true })),
  ),
  withTransform(
    'swallows-errors',
    'ends quietly instead of throwing',
    ['A-ERR-001', 'A-ERR-005'],
    async function* (events) {
      try {
        yield* events
      } catch {
        // the defect: the failure disappears
      }
    },
  ),
  withDefect('fabricates-finish', 'treats a cut stream as complete', ['A-ERR-006'], {
    fabricatesFinish: true,
  }),
  withDefect('raw-frame-errors', 'lets JSON.parse fail on a malformed frame', ['A-ERR-007'], {
    rawFrameErrors: true,
  }),
  withTransform(
    'leaks-key-in-errors',
    'puts the API key in error messages',
    ['A-ERR-009'],
    mapErrors((error, context) => copyError(error, { message: `${error.message} (key ${context.apiKey})` })),
  ),
  withTransform(
    'masks-key-badly',
    'shows the API key with only its last eight characters masked',
    ['A-ERR-009'],
    mapErrors((error, context) =>
      copyError(error, { message: `${error.message} (key ${context.apiKey.slice(0, -8)}********)` }),
    ),
  ),
  withTransform(
    'base64-key-in-cause',
    'keeps the Basic authorization header of the request on the error',
    ['A-ERR-009'],
    mapErrors((error, context) =>
      Object.assign(copyError(error, {}), {
        request: {
          headers: { authorization: `Basic ${Buffer.from(`:${context.apiKey}`).toString('base64')}` },
        },
      }),
    ),
  ),
  withTransform(
    'cuts-before-redacting',
    'cuts error messages to 300 characters before redacting the key',
    ['A-ERR-009'],
    mapErrors((error, context) => {
      // The defect needs the provider's words unredacted: put the key back where it was redacted.
      const original = error.message.replaceAll('[redacted]', context.apiKey)
      const cut = original.slice(0, 300)
      return copyError(error, { message: cut.replaceAll(context.apiKey, '[redacted]') })
    }),
  ),
  withDefect('no-idle-timeout', 'waits forever on a stalled stream', ['A-ERR-010'], { noIdleTimeout: true }),
  withTransform(
    'timeout-as-network',
    'reports a stalled stream as a network error',
    ['A-ERR-010'],
    mapErrors((error) => (error.kind === 'timeout' ? copyError(error, { kind: 'network' }) : error)),
  ),
  withTransform(
    'anonymous-errors',
    'leaves the provider name off its errors',
    ['A-ERR-011'],
    mapErrors((error) => copyError(error, { provider: 'unknown' })),
  ),
  withTransform(
    'raw-errors',
    'throws plain Errors instead of AdapterErrors',
    ['A-ERR-011', 'A-ERR-001'],
    async function* (events) {
      try {
        yield* events
      } catch (error) {
        throw new Error(error instanceof Error ? error.message : String(error))
      }
    },
  ),
  withDefect('probes-on-construction', 'calls the server from its constructor', ['A-REQ-001'], {
    probesOnConstruction: true,
  }),
  withDefect('drops-system-prompt', 'sends no system prompt', ['A-REQ-002'], { dropsSystemPrompt: true }),
  withDefect('drops-history', 'sends only the prompt', ['A-REQ-003', 'A-REQ-004'], { dropsHistory: true }),
  withDefect('drops-tools', 'offers no tools', ['A-REQ-004'], { dropsTools: true }),
  withDefect(
    'leaves-history-tools-undeclared',
    'replays tool calls with no tool defined when the call offers none (the Messages API answers 400)',
    ['A-REQ-013'],
    { leavesHistoryToolsUndeclared: true },
  ),
  withDefect('drops-images', 'drops image blocks', ['A-REQ-005'], { dropsImages: true }),
  withDefect('drops-thinking', 'drops thinking from the history', ['A-REQ-006'], { dropsThinking: true }),
  withDefect('retries-itself', 'retries once by itself', ['A-REQ-007'], { retriesItself: true }),
  withDefect(
    'ignores-output',
    'sends no structured-output field (the kernel would get free text)',
    ['A-REQ-011', 'A-REQ-012'],
    { ignoresOutput: true },
  ),
  withDefect(
    'keeps-output',
    'keeps the last output schema and sends it with later calls that ask for none',
    ['A-REQ-012'],
    { keepsOutput: true },
  ),
  withDefect('loosens-output-schema', 'asks for any JSON object instead of the schema given', ['A-REQ-011'], {
    loosensOutputSchema: true,
  }),
  withDefect('shares-stream-state', 'keeps the blocks being assembled on the instance', ['A-CNC-001'], {
    sharesStreamState: true,
  }),
  {
    name: 'poisoned-after-error',
    defect: 'keeps failing with its first error once one happened',
    catches: ['A-CNC-002'],
    create(context) {
      const inner = reference(context)
      let poisoned: unknown
      return {
        getName: () => inner.getName(),
        async *stream(prompt, options) {
          if (poisoned !== undefined) throw poisoned
          try {
            yield* inner.stream(prompt, options)
          } catch (error) {
            poisoned = error
            throw error
          }
        },
      }
    },
  },
  withDefect(
    'ignores-abort-before-headers',
    'links the abort signal only once the response headers arrived',
    ['A-ABT-005'],
    {
      abortsOnlyBody: true,
    },
  ),
]

/**
 * Broken variants of `ReferenceResponsesAdapter`, the stateful reference (OpenAI Responses
 * dialect), for the rules the stateless Anthropic reference cannot exercise.
 */
export const brokenStatefulAdapterVariants: readonly BrokenAdapterVariant[] = [
  {
    name: 'hides-session-id',
    defect: 'never reports the provider conversation id',
    catches: ['A-REQ-008'],
    create: (context) => new ReferenceResponsesAdapter({ ...context, defects: { hidesSessionId: true } }),
  },
  {
    name: 'replays-with-resume',
    defect: 'sends the whole history even with resume',
    catches: ['A-REQ-009'],
    create: (context) => new ReferenceResponsesAdapter({ ...context, defects: { replaysWithResume: true } }),
  },
  {
    name: 'no-resume-fallback',
    defect: 'fails when the provider no longer knows the resume id',
    catches: ['A-REQ-010'],
    create: (context) => new ReferenceResponsesAdapter({ ...context, defects: { noResumeFallback: true } }),
  },
]
