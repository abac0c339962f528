import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { IdleWatchdog } from './idle-watchdog.js'

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
})
afterEach(() => {
  vi.useRealTimers()
})

describe('IdleWatchdog', () => {
  it('fires once after idleMs of silence', () => {
    const onIdle = vi.fn()
    const watchdog = new IdleWatchdog(1_000, onIdle)
    watchdog.start()
    vi.advanceTimersByTime(999)
    expect(onIdle).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(onIdle).toHaveBeenCalledTimes(1)
    expect(watchdog.fired).toBe(true)
    vi.advanceTimersByTime(10_000)
    expect(onIdle).toHaveBeenCalledTimes(1)
  })

  it('counts the silence from the last touch', () => {
    const onIdle = vi.fn()
    const watchdog = new IdleWatchdog(1_000, onIdle)
    watchdog.start()
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(600)
      watchdog.touch()
    }
    expect(onIdle).not.toHaveBeenCalled()
    vi.advanceTimersByTime(999)
    expect(onIdle).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(onIdle).toHaveBeenCalledTimes(1)
  })

  it('does not count the time the caller holds an event, and counts again from release', () => {
    const onIdle = vi.fn()
    const watchdog = new IdleWatchdog(1_000, onIdle)
    watchdog.start()
    vi.advanceTimersByTime(900)
    watchdog.hold()
    vi.advanceTimersByTime(60_000)
    expect(onIdle).not.toHaveBeenCalled()
    watchdog.release()
    vi.advanceTimersByTime(999)
    expect(onIdle).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(onIdle).toHaveBeenCalledTimes(1)
  })

  it('arms one timer per request, not one per touch', () => {
    const watchdog = new IdleWatchdog(1_000, () => {})
    watchdog.start()
    for (let i = 0; i < 20_000; i++) watchdog.touch()
    expect(vi.getTimerCount()).toBe(1)
    watchdog.stop()
    expect(vi.getTimerCount()).toBe(0)
  })

  it('never fires with Infinity, and leaves no timer after stop()', () => {
    const onIdle = vi.fn()
    const infinite = new IdleWatchdog(Number.POSITIVE_INFINITY, onIdle)
    infinite.start()
    expect(vi.getTimerCount()).toBe(0)
    const stopped = new IdleWatchdog(1_000, onIdle)
    stopped.start()
    stopped.stop()
    vi.advanceTimersByTime(5_000)
    expect(onIdle).not.toHaveBeenCalled()
    expect(vi.getTimerCount()).toBe(0)
  })

  it('shorten() allows only that much more silence', () => {
    const onIdle = vi.fn()
    const watchdog = new IdleWatchdog(60_000, onIdle)
    watchdog.start()
    vi.advanceTimersByTime(30_000)
    watchdog.shorten(100)
    vi.advanceTimersByTime(99)
    expect(onIdle).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(onIdle).toHaveBeenCalledTimes(1)
  })
})

describe('IdleWatchdog and the process', () => {
  it('does not keep the process alive while the caller holds an event (a dropped stream)', async () => {
    vi.useRealTimers()
    const { execFile } = await import('node:child_process')
    const module = new URL('../../dist/provider/index.js', import.meta.url).href
    const script = `
      import { IdleWatchdog } from ${JSON.stringify(module)}
      const watchdog = new IdleWatchdog(30, () => console.log('fired'))
      watchdog.start()
      watchdog.hold() // the caller took an event and never asks for the next one
      process.on('exit', () => console.log('exited'))
    `
    // Before, the timer re-armed itself for ever while held: the process never exited (killed here).
    const outcome = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--input-type=module', '-e', script],
        { timeout: 10_000 },
        (error, stdout) => resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout }),
      )
    })
    expect(outcome).toEqual({ code: 0, stdout: 'exited\n' })
  })
})
