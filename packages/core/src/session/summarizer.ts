import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AnyMessage, ContentBlock, TokenUsage } from '../contracts/messages.js'
import { AgentError } from '../errors/agent-error.js'
import { isAdapterError } from '../errors/adapter-error.js'
import { backoffDelay, type RetryOptions } from '../retry/retry-options.js'
import { sleep } from '../util/abort.js'
import type { Logger } from '../util/logger.js'
import { addUsage } from '../util/token-usage.js'
import { textOf } from '../util/content-text.js'
import type { CompactionPlan } from './compaction-plan.js'

/** What the summariser call needs. */
export interface SummarizeOptions {
  adapter: AgentAdapter
  /** `''` lets the adapter use its default model. */
  model: string
  instructions: string
  signal: AbortSignal
  retry: Required<RetryOptions>
  logger: Logger | undefined
  sessionId: string
  /** Told of each retry before its wait, as the session's `retry` event. */
  onRetry?: (attempt: number, delayMs: number, error: AgentError) => void
}

/**
 * Asks the summariser for the summary of `plan`: one request whose system prompt is the
 * instructions and whose prompt is the previous summary and a plain-text transcript of the
 * messages (tool calls and results as text, images as placeholders, thinking left out) — so any
 * model of any provider can write it. A retryable error before the first event is tried again
 * like a model request. Resolves to the summary text and the request's usage.
 *
 * @throws the summariser's error, or an {@link AgentError} of code `COMPACTION_EMPTY` when it
 * answered without text.
 */
export async function summarize(
  plan: CompactionPlan,
  options: SummarizeOptions,
): Promise<{ text: string; usage: TokenUsage | undefined }> {
  const prompt = summaryPrompt(plan)
  for (let attempt = 0; ; attempt++) {
    let started = false
    try {
      let deltas = ''
      let final: string | undefined
      let usage: TokenUsage | undefined
      for await (const event of options.adapter.stream(prompt, {
        model: options.model,
        history: [],
        systemPrompt: options.instructions,
        signal: options.signal,
      })) {
        started = true
        if (event.type === 'text-delta') deltas += event.text
        else if (event.type === 'message') final = textOf(event.content)
        else if (event.type === 'usage')
          usage = usage === undefined ? { ...event.usage } : addUsage(usage, event.usage)
      }
      const text = (final ?? deltas).trim()
      if (text === '') {
        throw new AgentError(
          'The summariser answered without text; nothing was compacted.',
          'COMPACTION_EMPTY',
        )
      }
      return { text, usage }
    } catch (error) {
      if (!isAdapterError(error) || !error.retryable || error.kind === 'aborted') throw error
      if (options.signal.aborted || started || attempt >= options.retry.maxRetries) throw error
      const delayMs = error.retryAfterMs ?? backoffDelay(attempt + 1, options.retry)
      if (delayMs > options.retry.maxDelayMs) throw error
      options.onRetry?.(attempt + 1, delayMs, error)
      options.logger?.warn('agentx: retrying a failed summary request', {
        sessionId: options.sessionId,
        attempt: attempt + 1,
        delayMs,
      })
      await sleep(delayMs, options.signal)
    }
  }
}

/** The summariser's prompt: the previous summary, then the transcript of the messages to fold in. */
function summaryPrompt(plan: CompactionPlan): string {
  const parts: string[] = []
  if (plan.previous !== undefined) {
    parts.push(`<earlier-summary>\n${textOf(plan.previous.content)}\n</earlier-summary>`)
  }
  parts.push(`<conversation>\n${transcript(plan.messages)}\n</conversation>`)
  parts.push(
    plan.previous === undefined
      ? 'Summarise the conversation above as instructed.'
      : 'Write one summary of the earlier summary and the conversation that followed it, as instructed.',
  )
  return parts.join('\n\n')
}

/** The messages as plain text: `User:` / `Assistant:` / `Tool results:` turns. */
function transcript(messages: readonly AnyMessage[]): string {
  const names = new Map<string, string>()
  const turns: string[] = []
  for (const message of messages) {
    const speaker =
      message.type === 'user'
        ? 'User'
        : message.type === 'agent'
          ? 'Assistant'
          : message.type === 'tool'
            ? 'Tool results'
            : 'System'
    turns.push(`${speaker}:\n${contentText(message.content, names)}`)
  }
  return turns.join('\n\n')
}

function contentText(content: string | readonly ContentBlock[], names: Map<string, string>): string {
  if (typeof content === 'string') return content
  const lines: string[] = []
  for (const block of content) {
    switch (block.type) {
      case 'text':
        lines.push(block.text)
        break
      case 'image':
        lines.push('[image]')
        break
      case 'tool_use':
        names.set(block.id, block.name)
        lines.push(`[called tool ${block.name} with ${JSON.stringify(block.input) ?? 'no input'}]`)
        break
      case 'tool_result': {
        const name = names.get(block.toolUseId) ?? 'a tool'
        const status = block.isError === true ? ' (error)' : ''
        lines.push(`[result of ${name}${status}]: ${contentText(block.content, names)}`)
        break
      }
      default:
        // Thinking is the model's scratch work: left out of the summary's input.
        break
    }
  }
  return lines.join('\n')
}
