import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import type { EventStream } from '../util/event-stream.js'
import { profileFor } from './send-profile.js'
import type { SendOptions } from './session.js'
import type { SendRun, SessionCore } from './session-core.js'
import type { SessionEvent } from './session-events.js'
import { canSend } from './session-state.js'
import { assertNotWaitingChild, ROUTED_BY_PARENT } from './subagents.js'
import { validateSendInput, validateSendOptions } from './validate-input.js'

// The life of one send (or compaction) around the loop: refused or opened synchronously, then run
// with the caller's signal wired to the session's abort, and let go when it has settled.

/**
 * The synchronous part of send/stream: closed, deleted and busy checks, then validation, so a
 * same-tick second call or a bad input writes nothing.
 */
export function beginRun(
  core: SessionCore,
  content: unknown,
  options: unknown,
  sink: EventStream<SessionEvent> | undefined,
): SendRun {
  core.assertUsable()
  if (core.busy) throw new SessionBusyError(core.id)
  const input = validateSendInput(content)
  const checkedOptions = validateSendOptions(options)
  if ((options as { [ROUTED_BY_PARENT]?: boolean } | undefined)?.[ROUTED_BY_PARENT] !== true) {
    assertNotWaitingChild(core.data, 'send')
  }
  if (checkedOptions.agent !== undefined) profileFor(core, checkedOptions.agent)
  if (!canSend(core.data.state) && core.data.state !== 'active') {
    throw new SessionStateError(`Session ${core.id} cannot send in state '${core.data.state}'.`, {
      state: core.data.state,
    })
  }
  return newRun(core, input, checkedOptions, sink)
}

/** The session's run from now on: its events go to the listeners, and to `sink` for `stream()`. */
export function newRun(
  core: SessionCore,
  input: SendRun['input'],
  options: SendOptions,
  sink: EventStream<SessionEvent> | undefined,
): SendRun {
  const run: SendRun = {
    input,
    options,
    controller: new AbortController(),
    sink,
    emit:
      sink === undefined
        ? (event) => core.emit(event)
        : (event) => {
            core.emit(event)
            sink.push(event)
          },
    produced: [],
  }
  core.run = run
  return run
}

/**
 * Runs `body` as the session's running work: the caller's `signal` aborts it, and once it has
 * settled its writes are made durable before the lease goes, and the session takes a new send.
 */
export function startRun<T>(
  core: SessionCore,
  run: SendRun,
  body: () => Promise<T>,
  abort: () => void,
): Promise<T> {
  const external = run.options.signal
  if (external?.aborted) abort()
  else external?.addEventListener('abort', abort, { once: true })
  const running: Promise<T> = body().finally(async () => {
    external?.removeEventListener('abort', abort)
    await core.endLease(run)
    // A listener of this send's last events may have started the next one: leave it alone.
    if (core.run === run) core.run = undefined
    if (core.running === running) core.running = undefined
  })
  core.running = running
  return running
}
