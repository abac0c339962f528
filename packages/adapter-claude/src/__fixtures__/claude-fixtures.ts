import { readFileSync } from 'node:fs'
import type { Scenario } from '@agentx/contract-tests'

/** A recorded SSE fixture of this folder, byte for byte. */
export function readFixture(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), 'utf8')
}

/** A fake-provider scenario that serves a recorded stream (status 200, the dialect's stream headers). */
export function sse(body: string, delivery: Scenario['delivery'] = {}): Scenario {
  return { replay: { body }, delivery }
}

/** A fake-provider scenario that answers `status` with an Anthropic JSON error body. */
export function jsonError(status: number, json: unknown, headers: Record<string, string> = {}): Scenario {
  return {
    replay: {
      status,
      headers: { 'content-type': 'application/json', 'request-id': 'req_1', ...headers },
      body: JSON.stringify(json),
    },
  }
}

/** The index of the first frame of a recorded stream that contains `marker`. */
export function frameOf(body: string, marker: string): number {
  return body.split(/(?<=\n\n)/).findIndex((frame) => frame.includes(marker))
}
