import { readFileSync } from 'node:fs'
import type { FakeProvider, Scenario } from '@agentx/contract-tests'

/** Reads a recorded fixture of `src/__fixtures__`, byte for byte. */
export function fixture(name: string): string {
  return readFileSync(new URL(`../src/__fixtures__/${name}`, import.meta.url), 'utf8')
}

/** A fake-provider scenario that serves a recorded stream (status 200, `text/event-stream`). */
export function sse(body: string, delivery: Scenario['delivery'] = {}): Scenario {
  return { replay: { body, headers: { 'content-type': 'text/event-stream' } }, delivery }
}

/** A fake-provider scenario that answers `status` with a JSON body, byte for byte. */
export function json(status: number, body: string, headers: Record<string, string> = {}): Scenario {
  return { replay: { status, headers: { 'content-type': 'application/json', ...headers }, body } }
}

/** The JSON body of the `index`-th request `fake` received. */
export function bodyOf(fake: FakeProvider, index: number): Record<string, unknown> {
  return JSON.parse(fake.requests[index]?.received.body ?? 'null') as Record<string, unknown>
}
