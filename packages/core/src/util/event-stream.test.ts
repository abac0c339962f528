import { describe, expect, it, vi } from 'vitest'
import { EventStream } from './event-stream.js'

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const values: T[] = []
  for await (const value of stream) values.push(value)
  return values
}

describe('EventStream', () => {
  it('delivers values pushed before and while the consumer waits, in order', async () => {
    const stream = new EventStream<number>()
    stream.push(1)
    stream.push(2)
    const collected = collect(stream)
    await Promise.resolve()
    stream.push(3)
    stream.end()
    expect(await collected).toEqual([1, 2, 3])
  })

  it('keeps order when the ring wraps around and when a producer overfills it', async () => {
    const stream = new EventStream<number>()
    const iterator = stream[Symbol.asyncIterator]()
    let next = 0
    let taken = 0
    // Wrap: keep about 1500 values buffered while taking from the front.
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 1500; i++) stream.push(next++)
      for (let i = 0; i < 1400; i++) expect((await iterator.next()).value).toBe(taken++)
    }
    // Overfill: 10 000 values pushed without waiting grow the ring.
    for (let i = 0; i < 10_000; i++) stream.push(next++)
    expect(stream.backlog).toBe(next - taken)
    stream.end()
    for (;;) {
      const result = await iterator.next()
      if (result.done) break
      expect(result.value).toBe(taken++)
    }
    expect(taken).toBe(next)
  })

  it('is full at the high-water mark and releases the producer at the low-water mark', async () => {
    const stream = new EventStream<number>()
    for (let i = 0; i < 1024; i++) stream.push(i)
    expect(stream.full).toBe(true)
    let released = false
    void stream.drained().then(() => {
      released = true
    })
    const iterator = stream[Symbol.asyncIterator]()
    for (let i = 0; i < 767; i++) await iterator.next()
    await Promise.resolve()
    expect(released).toBe(false)
    expect(stream.backlog).toBe(257)
    await iterator.next()
    await Promise.resolve()
    expect(released).toBe(true)
    expect(stream.full).toBe(false)
  })

  it('rejects the last next() with the error it was ended with, after the buffered values', async () => {
    const stream = new EventStream<string>()
    stream.push('a')
    stream.end({ error: new Error('boom') })
    const iterator = stream[Symbol.asyncIterator]()
    expect(await iterator.next()).toEqual({ value: 'a', done: false })
    await expect(iterator.next()).rejects.toThrow('boom')
    expect(await iterator.next()).toEqual({ value: undefined, done: true })
  })

  it('rejects a waiting consumer when ended with an error', async () => {
    const stream = new EventStream<string>()
    const pending = stream[Symbol.asyncIterator]().next()
    stream.end({ error: new Error('late') })
    await expect(pending).rejects.toThrow('late')
  })

  it('breaking out cancels once, drops the buffer, releases the producer and ignores later pushes', async () => {
    const onCancel = vi.fn()
    const stream = new EventStream<number>(onCancel)
    for (let i = 0; i < 2000; i++) stream.push(i)
    const drained = stream.drained()
    for await (const value of stream) if (value === 3) break
    await drained
    expect(onCancel).toHaveBeenCalledTimes(1)
    stream.push(99)
    expect(stream.backlog).toBe(0)
    expect(await stream[Symbol.asyncIterator]().next()).toEqual({ value: undefined, done: true })
    await stream[Symbol.asyncIterator]().return?.()
    expect(onCancel).toHaveBeenCalledTimes(1)
  })
})
