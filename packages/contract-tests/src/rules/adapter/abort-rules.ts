import { type AdapterMessage, isAdapterError } from '@agentx/core'
import { describeError, type RuleCheck } from '../../engine/rule-check.js'
import type { AdapterRuleContext } from './adapter-rule-context.js'
import { type AdapterRule, defineAdapterRule } from './define-adapter-rule.js'
import {
  delay,
  expectAdapterError,
  LONG_TEXT,
  runStream,
  settle,
  streamOptions,
  summarize,
  textScenario,
  watchdogMs,
  within,
} from './adapter-fixtures.js'

const group = 'Abort and resources'

/**
 * A response that stalls (forever) after a few text deltas, with heartbeat comments so the
 * adapter's idle timeout never fires: only the adapter itself can end it.
 */
function stallingScenario(context: AdapterRuleContext): ReturnType<typeof textScenario> {
  return textScenario(
    LONG_TEXT,
    { deltaSize: 2 },
    {
      pauseBeforeFrame: 7,
      pauseMs: Number.POSITIVE_INFINITY,
      heartbeatMs: Math.max(50, Math.floor(context.idleTimeoutMs / 4)),
    },
  )
}

/** Opens a stream on a stalling response and reads until the first text-delta. */
async function openMidStream(
  context: AdapterRuleContext,
  check: RuleCheck,
  signal?: AbortSignal,
): Promise<{ iterator: AsyncIterator<AdapterMessage>; seen: AdapterMessage[] }> {
  context.harness.enqueue(stallingScenario(context))
  const iterator = context.adapter
    .stream('Hello', streamOptions(context, signal ? { signal } : {}))
    [Symbol.asyncIterator]()
  const seen: AdapterMessage[] = []
  for (;;) {
    const next = await within(iterator.next(), watchdogMs(context)).catch((error: unknown) => ({ error }))
    if ('timedOut' in next)
      return check.fail('no text-delta arrived before the server paused', { actual: summarize(seen) })
    if ('error' in next) {
      return check.fail(`the stream failed before its first text-delta: ${describeError(next.error)}`, {
        actual: describeError(next.error),
      })
    }
    if (next.value.done)
      return check.fail('the stream ended although the server is still paused', { actual: summarize(seen) })
    seen.push(next.value.value)
    if (next.value.value.type === 'text-delta') return { iterator, seen }
  }
}

/** Waits for the harness to see the client disconnect; fails the rule when it does not. */
async function expectDisconnect(context: AdapterRuleContext, check: RuleCheck, what: string): Promise<void> {
  try {
    await context.harness.waitForDisconnect(Math.max(2_000, context.idleTimeoutMs / 2))
  } catch {
    check.fail(`${what}: the server never saw the client close the connection`, {
      expected: 'the HTTP connection closed (response body cancelled, request aborted)',
      actual: `still open; disconnects = ${context.harness.disconnects}`,
    })
  }
}

/** Rules A-ABT-*: abort, early `break`, releasing connections. */
export const abortRules: AdapterRule[] = [
  defineAdapterRule({
    id: 'A-ABT-001',
    level: 'MUST',
    group,
    title: 'an already-aborted signal rejects with kind aborted and sends no request',
    hint: 'Check signal.aborted before doing any I/O and throw AdapterError kind aborted.',
    async check(context, check) {
      context.harness.enqueue(textScenario('never sent'))
      const controller = new AbortController()
      controller.abort()
      const outcome = await runStream(context, check, 'Hello', { signal: controller.signal })
      const error = expectAdapterError(check, outcome, 'streaming with an aborted signal')
      check.equal(error.kind, 'aborted', 'kind of the error')
      check.deepEqual(
        outcome.events.map((event) => event.type),
        [],
        'events yielded for an aborted call',
      )
      await settle()
      check.equal(context.harness.requests.length, 0, 'requests the server received')
    },
  }),
  defineAdapterRule({
    id: 'A-ABT-002',
    level: 'MUST',
    group,
    title:
      'abort mid-stream ends iteration with kind aborted (not timeout) and yields nothing after the abort',
    hint: 'Pass the signal to fetch/the SDK and check it when the read fails: an aborted read is kind aborted.',
    async check(context, check) {
      const controller = new AbortController()
      const { iterator } = await openMidStream(context, check, controller.signal)
      controller.abort()
      const after: AdapterMessage[] = []
      let failure: unknown
      const drain = async (): Promise<void> => {
        try {
          for (;;) {
            const next = await iterator.next()
            if (next.done) return
            after.push(next.value)
          }
        } catch (error) {
          failure = error
        }
      }
      const settled = await within(drain(), watchdogMs(context))
      if ('timedOut' in settled) {
        return check.fail('the stream did not end after abort()', {
          actual: `still pending after ${summarize(after)}`,
        })
      }
      check.deepEqual(
        after.map((event) => event.type),
        [],
        'events yielded after abort()',
      )
      check.ok(failure !== undefined, 'the stream ended quietly after abort(); it must throw kind aborted', {
        expected: 'AdapterError kind aborted',
        actual: 'iteration completed without an error',
      })
      check.ok(
        isAdapterError(failure),
        'abort() ended the stream with something that is not an AdapterError',
        {
          actual: describeError(failure),
        },
      )
      check.equal((failure as { kind?: unknown }).kind, 'aborted', 'kind of the error after abort()')
    },
  }),
  defineAdapterRule({
    id: 'A-ABT-003',
    level: 'MUST',
    group,
    title: 'abort mid-stream closes the HTTP connection (the server sees the client disconnect)',
    hint: 'Abort the fetch (or the SDK request) with the signal; cancel the response body.',
    async check(context, check) {
      const controller = new AbortController()
      const { iterator } = await openMidStream(context, check, controller.signal)
      controller.abort()
      // Keep consuming (as a for-await loop would) without waiting for it: the connection must close.
      const draining = (async () => {
        for (;;) if ((await iterator.next()).done) return
      })().catch(() => undefined)
      await expectDisconnect(context, check, 'after abort()')
      await within(draining, watchdogMs(context))
    },
  }),
  defineAdapterRule({
    id: 'A-ABT-004',
    level: 'MUST',
    group,
    title: 'an early break out of for-await closes the HTTP connection',
    hint: 'Release the request in the generator’s finally block (abort your own AbortController, cancel the body).',
    async check(context, check) {
      const { iterator } = await openMidStream(context, check)
      const returned = await within(Promise.resolve(iterator.return?.()), watchdogMs(context)).catch(
        (error: unknown) => ({
          error,
        }),
      )
      if ('error' in returned)
        check.fail(`return() (what break calls) threw: ${describeError(returned.error)}`)
      if ('timedOut' in returned) check.fail('return() (what break calls) never settled')
      await expectDisconnect(context, check, 'after break')
    },
  }),
  defineAdapterRule({
    id: 'A-ABT-005',
    level: 'MUST',
    group,
    title: 'abort while waiting for the response headers ends with kind aborted and closes the connection',
    hint: 'Give the signal to the request itself, not only to the body reading loop.',
    async check(context, check) {
      context.harness.enqueue(
        textScenario(
          'late',
          {},
          { pauseBeforeFrame: 0, pauseMs: Number.POSITIVE_INFINITY, holdHeaders: true },
        ),
      )
      const controller = new AbortController()
      const running = runStream(context, check, 'Hello', { signal: controller.signal })
      for (let i = 0; i < 500 && context.harness.requests.length === 0; i += 1) await delay(10)
      check.equal(context.harness.requests.length, 1, 'requests received before abort()')
      controller.abort()
      const error = expectAdapterError(check, await running, 'abort before the first frame')
      check.equal(error.kind, 'aborted', 'kind of the error')
      await expectDisconnect(context, check, 'after abort() before the first frame')
    },
  }),
  defineAdapterRule({
    id: 'A-ABT-006',
    level: 'SHOULD',
    group,
    title: 'no unhandled rejection and no leftover timer after abort, break or a failed stream',
    hint: 'Clear idle timers in finally; never leave a promise without a handler (e.g. a rejected fetch you no longer await).',
    timeoutMs: 20_000,
    async check(context, check) {
      const unhandled: unknown[] = []
      const onUnhandled = (reason: unknown): void => {
        unhandled.push(reason)
      }
      process.on('unhandledRejection', onUnhandled)
      let abortedIterator: AsyncIterator<unknown> | undefined
      try {
        context.harness.enqueue(textScenario('warm-up'))
        await runStream(context, check)
        await settle()
        const baseline = countTimers()
        const controller = new AbortController()
        const aborted = await openMidStream(context, check, controller.signal)
        abortedIterator = aborted.iterator
        controller.abort()
        await Promise.resolve(aborted.iterator.next()).catch(() => undefined)
        const broken = await openMidStream(context, check)
        await Promise.resolve(broken.iterator.return?.()).catch(() => undefined)
        context.harness.enqueue({ httpError: { kind: 'server' } })
        await runStream(context, check)
        // Long enough for a forgotten idle timer to fire and for stray rejections to surface.
        await delay(context.idleTimeoutMs + 300)
        await settle()
        check.deepEqual(
          unhandled.map(describeError),
          [],
          'unhandled rejections after abort, break and an error',
        )
        const leftover = countTimers() - baseline
        check.ok(leftover <= 0, 'timers are still pending after the streams ended', {
          expected: `at most ${baseline} active timers (as before)`,
          actual: `${baseline + leftover}`,
        })
      } finally {
        process.off('unhandledRejection', onUnhandled)
        // Checked as a consumer left it; now closed, so an adapter that ignores the abort cannot
        // keep the test process alive (bounded: its return() may hang too).
        await Promise.race([
          Promise.resolve(abortedIterator?.return?.()).catch(() => undefined),
          delay(1_000),
        ])
      }
    },
  }),
]

function countTimers(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length
}
