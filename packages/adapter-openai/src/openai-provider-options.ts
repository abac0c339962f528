/**
 * What `providerOptions.openai` of a send may hold: raw request body fields of the Responses API
 * or Chat Completions, merged into every request of that send. The common ones are listed; any
 * other field the API knows passes through unchanged. The fields the adapter owns (`model`,
 * `input`, `messages`, `stream`, `previous_response_id`) are refused with a `ValidationError`
 * before the request.
 *
 * @example
 * await session.send('Plan the trip', {
 *   providerOptions: { openai: { reasoning: { effort: 'low', summary: 'auto' } } satisfies OpenAIProviderOptions },
 * })
 */
export interface OpenAIProviderOptions {
  /** Responses: reasoning effort and summaries (`summary: 'auto'` streams them as thinking). Default is the model's. */
  reasoning?: {
    effort?: 'minimal' | 'low' | 'medium' | 'high'
    summary?: 'auto' | 'concise' | 'detailed'
  } & Record<string, unknown>
  /** Responses: whether OpenAI keeps the response; `false` disables resuming with `previous_response_id`. Default is `true`. */
  store?: boolean
  /** Responses: extra output, e.g. `['reasoning.encrypted_content']` to replay reasoning with `store: false`. Default is none. */
  include?: string[]
  /** Responses: a Conversations API id that holds the history instead of `previous_response_id`. Default is none. */
  conversation?: string | { id: string }
  /** `'auto'`, `'none'`, `'required'` or a named function. Default is `'auto'`. */
  tool_choice?: unknown
  /** Whether the model may call several tools at once. Default is `true`. */
  parallel_tool_calls?: boolean
  /** Chat: `null` leaves out `stream_options` for servers that reject it. Default is `{ include_usage: true }`. */
  stream_options?: { include_usage?: boolean } | null
  /**
   * Responses: text output settings, e.g. `{ verbosity: 'low' }`. With a send's `output` the
   * adapter sets `text.format` itself (a `format` here as well is a `ValidationError`). Default is none.
   */
  text?: Record<string, unknown>
  /**
   * Chat: the response format, e.g. `{ type: 'json_object' }`. With a send's `output` the adapter
   * sets it itself (setting it here as well is a `ValidationError`). Default is none.
   */
  response_format?: Record<string, unknown>
  /** `'auto'`, `'default'`, `'flex'`, `'priority'`. Default is the project's. */
  service_tier?: string
  /** Any other body field of the API. */
  [field: string]: unknown
}
