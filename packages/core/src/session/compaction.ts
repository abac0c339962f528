import type { AdapterStreamOptions, AgentAdapter } from '../contracts/agent-adapter.js'
import type { AnyMessage, ContentBlock, TokenUsage } from '../contracts/messages.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { addUsage } from '../util/token-usage.js'
import { uuidv7 } from '../util/uuid-v7.js'
import {
  type CompactionOptions,
  DEFAULT_COMPACTION_INSTRUCTIONS,
  DEFAULT_KEEP_RECENT_MESSAGES,
} from './compaction-options.js'
import { estimateRequestTokens, planCompaction } from './compaction-plan.js'
import type { SendRun, SessionCore } from './session-core.js'
import { DEFAULT_PROFILE, type SessionProfile } from './session-profile.js'
import { defaultModelOf } from './send-profile.js'
import { refresh } from './session-sync.js'
import { summarize } from './summarizer.js'

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
    await refresh(core)
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
      model: summaryModel(settings, input.model),
      instructions: settings?.instructions ?? DEFAULT_COMPACTION_INSTRUCTIONS,
      signal,
      retry: core.options.retry,
      logger: core.options.logger,
      sessionId: core.id,
      onRetry: (attempt, delayMs, error) => run.emit({ type: 'retry', attempt, delayMs, error }),
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
 * The model of a summary request: the configured one; else, for a summariser adapter of its own,
 * that adapter's default model (it may be another provider's, where the request's model does not
 * exist); else — no summariser adapter, or one that names no default — the request's model.
 */
function summaryModel(settings: CompactionOptions | undefined, requestModel: string): string {
  if (settings?.model !== undefined) return settings.model
  const adapter = settings?.adapter
  return (adapter === undefined ? '' : defaultModelOf(adapter)) || requestModel
}
