import type { InstrumentAgentOptions } from './instrument-agent.js'

const KNOWN = {
  tracerProvider: true,
  meterProvider: true,
  recordContent: true,
  providerName: true,
  agentName: true,
} satisfies Record<keyof InstrumentAgentOptions, true>

/**
 * Refuses options `instrumentAgent` would otherwise misread without a word: an unknown key (a
 * misspelt `recordContents` would leave content unrecorded), or a value of the wrong type (a
 * provider without `getTracer` would fail on the first event, where failures are swallowed).
 */
export function checkOptions(options: unknown): asserts options is InstrumentAgentOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`instrumentAgent: options must be an object, got ${describeValue(options)}.`)
  }
  const record = options as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (!Object.hasOwn(KNOWN, key)) {
      throw new TypeError(
        `instrumentAgent: unknown option '${key}' (known: ${Object.keys(KNOWN).join(', ')}).`,
      )
    }
  }
  expect(
    record,
    'tracerProvider',
    (v) => typeof (v as { getTracer?: unknown }).getTracer === 'function',
    'a TracerProvider (with getTracer())',
  )
  expect(
    record,
    'meterProvider',
    (v) => typeof (v as { getMeter?: unknown }).getMeter === 'function',
    'a MeterProvider (with getMeter())',
  )
  expect(record, 'recordContent', (v) => typeof v === 'boolean', 'a boolean')
  expect(record, 'providerName', (v) => typeof v === 'string' && v !== '', 'a non-empty string')
  expect(record, 'agentName', (v) => typeof v === 'string' && v !== '', 'a non-empty string')
}

function expect(
  options: Record<string, unknown>,
  key: keyof InstrumentAgentOptions,
  ok: (value: object | string | boolean | number) => boolean,
  what: string,
): void {
  const value = options[key]
  if (value === undefined) return
  if (value === null || !ok(value as object)) {
    throw new TypeError(`instrumentAgent: option '${key}' must be ${what}, got ${describeValue(value)}.`)
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`
  if (typeof value === 'object') return 'an object without it'
  return `${typeof value} ${String(value)}`
}
