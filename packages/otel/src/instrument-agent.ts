import {
  context,
  type MeterProvider,
  metrics,
  type TracerProvider,
  trace,
  ValueType,
} from '@opentelemetry/api'
import { checkOptions } from './check-options.js'
import { DURATION_BUCKETS, METRIC, providerNameOf, TOKEN_BUCKETS } from './gen-ai-attributes.js'
import type { InstrumentableAgent, ObservedEvent } from './observed-event.js'
import { SessionTrace } from './session-trace.js'
import type { Telemetry } from './telemetry.js'

/** The instrumentation scope name of every span and metric. */
export const INSTRUMENTATION_NAME = '@agentx/otel'

/** Options of {@link instrumentAgent}. */
export interface InstrumentAgentOptions {
  /** Where spans go. Default is the global tracer provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider
  /** Where metrics go. Default is the global meter provider (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider
  /**
   * Whether message content is recorded: `gen_ai.input.messages` / `gen_ai.output.messages` on
   * `invoke_agent` and `chat` spans, `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result` and
   * tool error text on `execute_tool` spans. Content may hold personal data. Default is `false`.
   */
  recordContent?: boolean
  /**
   * `gen_ai.provider.name`, used as given. Default is the agent's adapter name when the agent
   * exposes its adapter (`getAdapter()`, as `@agentx/core` agents do) or an error names it, mapped
   * to the conventions' well-known values (`claude` → `anthropic`, `gemini` → `gcp.gemini`,
   * `openai` → `openai`); `'unknown'` until then.
   */
  providerName?: string
  /**
   * `gen_ai.agent.name` of every send, and the span name `invoke_agent {agentName}`. Default is the
   * profile that answers (`step-start`'s `agent`, `'default'` for an agent without profiles).
   */
  agentName?: string
}

/**
 * Emits OpenTelemetry spans and metrics for every send of an agent, following the GenAI semantic
 * conventions (DESIGN §10.8), and returns the function that stops it.
 *
 * Spans: `invoke_agent {agent}` per send (`INTERNAL`, from `state: active` to `done`, `error` or
 * an ending state), with children `chat {model}` per model request (`CLIENT`) and
 * `execute_tool {name}` per tool call (`INTERNAL`). `invoke_agent` is parented in the context
 * active when the send starts (so it nests under the caller's span when a context manager is
 * registered); its children are parented explicitly, so no context manager is needed. Retries,
 * handoffs, sub-agents, compactions, persistence errors and input requests are span events
 * (`agentx.*`); a sub-agent's own sends are `invoke_agent` spans under the tool call that started
 * them.
 *
 * Metrics: `gen_ai.client.token.usage` (histogram, `{token}`, per model request and
 * `gen_ai.token.type`) and `gen_ai.client.operation.duration` (histogram, seconds, per model
 * request and per send, with `error.type` on failures).
 *
 * May be called before or after `agent.initialize()`; it subscribes and does nothing else until
 * events arrive. The returned function unsubscribes and ends the spans still open. A failure
 * inside the instrumentation never reaches the agent.
 */
export function instrumentAgent(
  agent: InstrumentableAgent,
  options: InstrumentAgentOptions = {},
): () => void {
  if (typeof agent?.subscribe !== 'function') {
    throw new TypeError('instrumentAgent: the agent has no subscribe() method (@agentx/core 0.2 or later).')
  }
  checkOptions(options)
  const tracerProvider = options.tracerProvider ?? trace.getTracerProvider()
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(INSTRUMENTATION_NAME)
  const traces = new Map<string, SessionTrace>()
  /** Child session → parent session, for children traced through their parent's `subagent` events. */
  const parents = new Map<string, string>()
  let provider = options.providerName
  let asked = false

  const learn = (adapterName: unknown): void => {
    if (provider !== undefined || typeof adapterName !== 'string' || adapterName === '') return
    provider = providerNameOf(adapterName)
    for (const sessionTrace of traces.values()) sessionTrace.providerResolved(provider)
  }
  const telemetry: Telemetry = {
    tracer: tracerProvider.getTracer(INSTRUMENTATION_NAME),
    tokenUsage: meter.createHistogram(METRIC.tokenUsage, {
      description: 'Number of input and output tokens used.',
      unit: '{token}',
      valueType: ValueType.INT,
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    }),
    operationDuration: meter.createHistogram(METRIC.operationDuration, {
      description: 'GenAI operation duration.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    recordContent: options.recordContent === true,
    agentName: options.agentName,
    configuredProvider: options.providerName,
    provider: () => provider ?? 'unknown',
    learnProvider: learn,
  }

  // The agent is initialized once it emits: only then is asking for its adapter free of side effects.
  const askAdapter = (): void => {
    asked = true
    if (provider !== undefined || typeof agent.getAdapter !== 'function') return
    try {
      Promise.resolve(agent.getAdapter())
        .then((adapter) => learn(adapter?.getName?.()))
        .catch(() => undefined)
    } catch {
      // An agent that cannot say: keep 'unknown'.
    }
  }

  const forget = (sessionTrace: SessionTrace): void => {
    if (!sessionTrace.idle || traces.get(sessionTrace.sessionId) !== sessionTrace) return
    traces.delete(sessionTrace.sessionId)
    for (const child of sessionTrace.children) parents.delete(child)
    if (sessionTrace.viaParent) parents.delete(sessionTrace.sessionId)
  }

  const onSubagent = (event: ObservedEvent, parentId: string): void => {
    const childId = event.sessionId
    const inner = event.event as ObservedEvent | undefined
    if (typeof childId !== 'string' || typeof inner?.type !== 'string') return
    const agentName = typeof event.agent === 'string' ? event.agent : undefined
    const toolUseId = typeof event.toolUseId === 'string' ? event.toolUseId : undefined
    let child = traces.get(childId)
    // A child already traced from its own events (they came first) stays a trace of its own.
    if (child && !child.viaParent && child.active) return
    if (!child?.viaParent) {
      if (!startsTrace(inner, telemetry.recordContent)) return
      const parent = traces.get(parentId)
      child = new SessionTrace(telemetry, childId, {
        ...(agentName === undefined ? {} : { agentName }),
        parent: () => (parent ? parent.childContext(agentName ?? '', toolUseId) : context.active()),
        viaParent: true,
        onUsage: (usage) => traces.get(parentId)?.addChildUsage(usage),
      })
      traces.set(childId, child)
      parents.set(childId, parentId)
      parent?.noteSubagent(childId, agentName ?? '')
    }
    if (inner.type === 'subagent') onSubagent(inner, childId)
    else child.handle(inner)
    forget(child)
  }

  const listener = (event: ObservedEvent, session: { readonly id: string }): void => {
    try {
      if (!asked) askAdapter()
      const id = session?.id
      if (typeof id !== 'string' || parents.has(id)) return
      if (event.type === 'subagent') {
        onSubagent(event, id)
        return
      }
      let sessionTrace = traces.get(id)
      if (!sessionTrace) {
        if (!startsTrace(event, telemetry.recordContent)) return
        sessionTrace = new SessionTrace(telemetry, id)
        traces.set(id, sessionTrace)
      }
      sessionTrace.handle(event)
      forget(sessionTrace)
    } catch {
      // Telemetry must never break a send.
    }
  }

  const unsubscribe = agent.subscribe(listener)
  let stopped = false
  return () => {
    if (stopped) return
    stopped = true
    unsubscribe()
    for (const sessionTrace of traces.values()) {
      try {
        sessionTrace.close()
      } catch {
        // Ending a span of a shut-down SDK may throw; nothing to do about it.
      }
    }
    traces.clear()
    parents.clear()
  }
}

/** Events that can open a trace for a session nobody traces yet; anything else is ignored cheaply. */
function startsTrace(event: ObservedEvent, recordContent: boolean): boolean {
  switch (event.type) {
    case 'state':
      return event.state === 'active'
    case 'compaction':
      return true
    case 'message':
      return recordContent && (event.message as { type?: unknown } | undefined)?.type === 'user'
    default:
      return false
  }
}
