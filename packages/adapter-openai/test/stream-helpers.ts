import type { AdapterMessage } from '@agentx/core'

/** Reads a stream to its end; returns what it yielded and what it threw. */
export async function run(
  iterable: AsyncIterable<AdapterMessage>,
): Promise<{ events: AdapterMessage[]; error: unknown; failed: boolean }> {
  const events: AdapterMessage[] = []
  try {
    for await (const event of iterable) events.push(event)
    return { events, error: undefined, failed: false }
  } catch (error) {
    return { events, error, failed: true }
  }
}

/** The message event of a stream. */
export function messageOf(events: AdapterMessage[]): Extract<AdapterMessage, { type: 'message' }> {
  const found = events.filter((event) => event.type === 'message')
  if (found.length !== 1) throw new Error(`expected one message event, got ${found.length}`)
  return found[0] as Extract<AdapterMessage, { type: 'message' }>
}

/** The concatenated text of the `text-delta` (or `thinking-delta`) events. */
export function deltas(
  events: AdapterMessage[],
  type: 'text-delta' | 'thinking-delta' = 'text-delta',
): string {
  return events.map((event) => (event.type === type ? event.text : '')).join('')
}
