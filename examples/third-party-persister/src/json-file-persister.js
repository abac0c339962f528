import { readFile } from 'node:fs/promises'
import {
  ConfigurationError,
  cloneJson,
  compareByActivity,
  isAgentError,
  NotFoundError,
  PersistenceError,
  ValidationError,
  validateDeleteSessionsQuery,
  validateListQuery,
  validateMessage,
  validateMessagesQuery,
  validateSessionData,
} from '@agentx/core'
import { writeFileAtomically } from './write-file-atomically.js'

/** @typedef {import('@agentx/core').AgentPersister} AgentPersister */
/** @typedef {import('@agentx/core').AnyMessage} AnyMessage */
/** @typedef {import('@agentx/core').SessionData} SessionData */
/** @typedef {import('@agentx/core').ListSessionsQuery} ListSessionsQuery */
/** @typedef {import('@agentx/core').GetMessagesQuery} GetMessagesQuery */
/** @typedef {import('@agentx/core').DeleteSessionsQuery} DeleteSessionsQuery */

/** Written into every store file, so a foreign JSON file is never mistaken for one. */
const FORMAT = 'agentx-json-file-store'
const VERSION = 1

/**
 * One session of the store: its data, its messages sorted by `seq`, and the same messages by id.
 * @typedef {{ session: SessionData, messages: AnyMessage[], byId: Map<string, AnyMessage> }} StoredSession
 */

/**
 * A queued call. `run` reads or changes the store; a write's `run` returns whether it changed
 * anything (or `{ changed, value }` to resolve the call with `value`) and MUST throw before
 * changing anything when it fails.
 * @typedef {{ write: boolean, action: string, run: (store: Map<string, StoredSession>) => unknown, resolve: (value: unknown) => void, reject: (error: unknown) => void }} Job
 */

/**
 * An {@link AgentPersister} that keeps a whole store in one JSON file: the third-party persister of
 * the AgentX examples, written only against the public exports of `@agentx/core`.
 *
 * The file is read on first use and kept in memory. Every call joins one queue that runs in call
 * order, so a read sees every write issued before it. Writes that arrive together (the kernel
 * saves without awaiting) are applied together and written with ONE atomic file replacement
 * (temporary file, fsync, rename), and each call resolves only when the file that holds its
 * change is on disk. When a write fails, its calls reject with a `PersistenceError` and the store
 * is read again from the file, which still holds the last complete state.
 *
 * Meant for one process per file and small stores (every write rewrites the whole file); use
 * `@agentx/persister-sqlite` or `@agentx/persister-postgres` beyond that.
 *
 * @implements {AgentPersister}
 */
export class JsonFilePersister {
  /** @readonly */
  specificationVersion = /** @type {const} */ ('v1')
  /** The store file, as given. @readonly @type {string} */
  filename
  /** @type {Map<string, StoredSession> | undefined} */
  #store
  /** @type {Job[]} */
  #queue = []
  /** @type {Promise<void> | undefined} */
  #draining
  /** @type {Promise<void> | undefined} */
  #closing

  /** @param {{ filename: string }} options */
  constructor(options) {
    if (typeof options?.filename !== 'string' || options.filename.length === 0) {
      throw new ConfigurationError('JsonFilePersister needs options.filename: the path of its JSON file.')
    }
    this.filename = options.filename
  }

  /** @param {SessionData} session @returns {Promise<void>} */
  saveSession(session) {
    return this.#call(true, 'save a session', () => {
      const copy = validateSessionData(session)
      return (store) => {
        const stored = store.get(copy.id)
        if (stored) stored.session = copy
        else store.set(copy.id, { session: copy, messages: [], byId: new Map() })
        return true
      }
    })
  }

  /** @param {string} id @returns {Promise<SessionData | null>} */
  getSession(id) {
    return this.#call(false, 'read a session', () => {
      requireText(id, 'id')
      return (store) => {
        const stored = store.get(id)
        return stored ? cloneJson(stored.session) : null
      }
    })
  }

  /** Every session, child sessions included. @returns {Promise<SessionData[]>} */
  getAllSessions() {
    return this.listSessions({ includeChildren: true })
  }

  /** @param {ListSessionsQuery} [query] @returns {Promise<SessionData[]>} */
  listSessions(query = {}) {
    return this.#call(false, 'list sessions', () => {
      const states = validateListQuery(query)
      const { userId, appName, metadata, includeChildren, limit } = query
      const offset = query.offset ?? 0
      return (store) =>
        [...store.values()]
          .map((stored) => stored.session)
          .filter(
            (session) =>
              (userId === undefined || session.userId === userId) &&
              (appName === undefined || session.appName === appName) &&
              (states === undefined || states.includes(session.state)) &&
              (includeChildren === true || session.parentSessionId === undefined) &&
              (metadata === undefined ||
                (session.metadata !== undefined &&
                  Object.hasOwn(session.metadata, metadata.key) &&
                  session.metadata[metadata.key] === metadata.value)),
          )
          .sort(compareByActivity)
          .slice(offset, limit === undefined ? undefined : offset + limit)
          .map((session) => cloneJson(session))
    })
  }

  /** Deletes a session with its messages and its child sessions. @param {string} id @returns {Promise<void>} */
  deleteSession(id) {
    return this.#call(true, 'delete a session', () => {
      requireText(id, 'id')
      // The session's messages live inside it, so they go with it.
      return (store) => deleteTree(store, [id]) > 0
    })
  }

  /**
   * Retention (capability `retention`): deletes the sessions of the scope active strictly before
   * `query.lastActivityBefore` (in `query.states` when given), with their messages and child
   * sessions, and resolves to how many sessions went.
   * @param {DeleteSessionsQuery} query
   * @returns {Promise<number>}
   */
  deleteSessions(query) {
    return this.#call(true, 'delete sessions', () => {
      const { lastActivityBefore, states, userId, appName } = validateDeleteSessionsQuery(query)
      return (store) => {
        const selected = [...store.values()]
          .map((stored) => stored.session)
          .filter(
            (session) =>
              // A child goes with its parent's tree, never on its own (P-RET-006).
              (session.parentSessionId === undefined || !store.has(session.parentSessionId)) &&
              session.lastActivity < lastActivityBefore &&
              (states === undefined || states.includes(session.state)) &&
              (userId === undefined || session.userId === userId) &&
              (appName === undefined || session.appName === appName),
          )
          .map((session) => session.id)
        const deleted = deleteTree(store, selected)
        // A write's `run` says whether it changed anything; the count travels beside it.
        return { changed: deleted > 0, value: deleted }
      }
    })
  }

  /** @param {string} sessionId @param {AnyMessage} message @returns {Promise<void>} */
  saveMessage(sessionId, message) {
    return this.#call(true, 'save a message', () => {
      const copy = validateMessage(sessionId, message)
      return (store) => {
        const stored = store.get(sessionId)
        if (!stored) {
          throw new NotFoundError(`Cannot save message ${copy.id}: session ${sessionId} does not exist.`)
        }
        const { messages, byId } = stored
        const atSeq = messages[lowerBound(messages, copy.seq)]
        if (atSeq && atSeq.seq === copy.seq && atSeq.id !== copy.id) {
          throw new PersistenceError(
            `Cannot save message ${copy.id}: session ${sessionId} already has message ${atSeq.id} at seq ${copy.seq}.`,
            { code: 'CONFLICT' },
          )
        }
        const existing = byId.get(copy.id)
        if (existing) messages.splice(lowerBound(messages, existing.seq), 1)
        messages.splice(lowerBound(messages, copy.seq), 0, copy)
        byId.set(copy.id, copy)
        return true
      }
    })
  }

  /** @param {string} sessionId @param {GetMessagesQuery} [query] @returns {Promise<AnyMessage[]>} */
  getMessages(sessionId, query = {}) {
    return this.#call(false, 'read messages', () => {
      requireText(sessionId, 'sessionId')
      validateMessagesQuery(query)
      const { afterSeq, beforeSeq, limit } = query
      return (store) => {
        const messages = store.get(sessionId)?.messages ?? []
        let start = afterSeq === undefined ? 0 : lowerBound(messages, Math.floor(afterSeq) + 1)
        let end = beforeSeq === undefined ? messages.length : lowerBound(messages, Math.ceil(beforeSeq))
        if (end < start) end = start
        // With beforeSeq, a limit takes the last messages before it; otherwise the first ones.
        if (limit !== undefined) {
          if (beforeSeq === undefined) end = Math.min(end, start + limit)
          else start = Math.max(start, end - limit)
        }
        return messages.slice(start, end).map((message) => cloneJson(message))
      }
    })
  }

  /** @param {string} sessionId @returns {Promise<void>} */
  deleteMessages(sessionId) {
    return this.#call(true, 'delete messages', () => {
      requireText(sessionId, 'sessionId')
      return (store) => {
        const stored = store.get(sessionId)
        if (!stored || stored.messages.length === 0) return false
        stored.messages = []
        stored.byId.clear()
        return true
      }
    })
  }

  /**
   * Waits for every call already made (their writes included), then closes. Idempotent; any call
   * made afterwards rejects with code `CLOSED`.
   * @returns {Promise<void>}
   */
  close() {
    this.#closing ??= (async () => {
      while (this.#draining) await this.#draining
      this.#store = undefined
    })()
    return this.#closing
  }

  /**
   * Queues a call. `prepare` runs now: it validates and copies the input (so a caller that mutates
   * it afterwards changes nothing) and returns the step that runs in queue order.
   * @template T
   * @param {boolean} write
   * @param {string} action
   * @param {() => (store: Map<string, StoredSession>) => unknown} prepare
   * @returns {Promise<T>}
   */
  #call(write, action, prepare) {
    return new Promise((resolve, reject) => {
      if (this.#closing) {
        reject(
          new PersistenceError(`This JsonFilePersister (${this.filename}) is closed.`, { code: 'CLOSED' }),
        )
        return
      }
      try {
        const run = prepare()
        this.#queue.push({
          write,
          action,
          run,
          resolve: /** @type {(value: unknown) => void} */ (resolve),
          reject,
        })
      } catch (error) {
        reject(error)
        return
      }
      // setImmediate, not a microtask: every call made in this turn of the event loop, across any
      // number of promise chains, joins the same batch and the same file write.
      this.#draining ??= new Promise((done) => setImmediate(done)).then(() => this.#drain())
    })
  }

  async #drain() {
    try {
      while (this.#queue.length > 0) {
        let store
        try {
          store = await this.#load()
        } catch (error) {
          for (const job of this.#queue.splice(0)) job.reject(error)
          continue
        }
        const head = /** @type {Job} */ (this.#queue[0])
        if (!head.write) {
          this.#queue.shift()
          settle(head, () => head.run(store))
          continue
        }
        let end = 0
        while (end < this.#queue.length && this.#queue[end]?.write) end++
        const batch = this.#queue.splice(0, end)
        /** @type {Job[]} */
        const applied = []
        let changed = false
        /** @type {unknown[]} */
        const values = []
        for (const job of batch) {
          try {
            const outcome = job.run(store)
            const result =
              typeof outcome === 'object' && outcome !== null ? outcome : { changed: outcome === true }
            changed = /** @type {{ changed: boolean }} */ (result).changed || changed
            values.push(/** @type {{ value?: unknown }} */ (result).value)
            applied.push(job)
          } catch (error) {
            job.reject(toAgentError(error, job.action, this.filename))
          }
        }
        if (!changed) {
          applied.forEach((job, index) => job.resolve(values[index]))
          continue
        }
        try {
          await writeFileAtomically(this.filename, serialize(store))
          applied.forEach((job, index) => job.resolve(values[index]))
        } catch (error) {
          // The file still holds the last complete state: forget the unsaved changes, read it again.
          this.#store = undefined
          const failure = toAgentError(error, `save ${applied.length} change(s)`, this.filename)
          for (const job of applied) job.reject(failure)
        }
      }
    } finally {
      this.#draining = undefined
    }
  }

  /** @returns {Promise<Map<string, StoredSession>>} */
  async #load() {
    if (this.#store) return this.#store
    let text
    try {
      text = await readFile(this.filename, 'utf8')
    } catch (error) {
      if (/** @type {{ code?: unknown }} */ (error).code !== 'ENOENT') {
        throw toAgentError(error, 'read the store', this.filename)
      }
      this.#store = new Map()
      return this.#store
    }
    this.#store = parse(text, this.filename)
    return this.#store
  }
}

/**
 * Deletes the sessions `ids` and every session below them (by `parentSessionId`); returns how many.
 * @param {Map<string, StoredSession>} store
 * @param {string[]} ids
 */
function deleteTree(store, ids) {
  let deleted = 0
  const pending = [...ids]
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    if (!store.delete(id)) continue
    deleted++
    for (const stored of store.values())
      if (stored.session.parentSessionId === id) pending.push(stored.session.id)
  }
  return deleted
}

/**
 * @param {Job} job
 * @param {() => unknown} run
 */
function settle(job, run) {
  try {
    job.resolve(run())
  } catch (error) {
    job.reject(error)
  }
}

/** @param {Map<string, StoredSession>} store @returns {string} */
function serialize(store) {
  const sessions = [...store.values()].map(({ session, messages }) => ({ session, messages }))
  // JSON escapes unpaired surrogates (`\ud800`) and NUL, so every string round-trips byte-exact.
  return JSON.stringify({ format: FORMAT, version: VERSION, sessions })
}

/**
 * @param {string} text
 * @param {string} filename
 * @returns {Map<string, StoredSession>}
 */
function parse(text, filename) {
  /** @type {unknown} */
  let value
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw foreignFile(filename, 'it is not valid JSON', error)
  }
  const file = /** @type {{ format?: unknown, version?: unknown, sessions?: unknown }} */ (value)
  if (typeof file !== 'object' || file === null || file.format !== FORMAT || !Array.isArray(file.sessions)) {
    throw foreignFile(filename, `it has no "format": "${FORMAT}"`)
  }
  if (file.version !== VERSION) {
    throw foreignFile(filename, `its format version ${String(file.version)} is not ${VERSION}`)
  }
  /** @type {Map<string, StoredSession>} */
  const store = new Map()
  for (const { session, messages } of /** @type {Array<{ session: SessionData, messages: AnyMessage[] }>} */ (
    file.sessions
  )) {
    store.set(session.id, {
      session,
      messages,
      byId: new Map(messages.map((message) => [message.id, message])),
    })
  }
  return store
}

/**
 * @param {string} filename
 * @param {string} reason
 * @param {unknown} [cause]
 */
function foreignFile(filename, reason, cause) {
  return new PersistenceError(
    `${filename} is not a JsonFilePersister store (${reason}). It was left untouched: move it away or choose another filename.`,
    { cause, retryable: false },
  )
}

/**
 * A driver error as a `PersistenceError` with the Node error as `cause`; AgentErrors pass through.
 * @param {unknown} error
 * @param {string} action
 * @param {string} filename
 */
function toAgentError(error, action, filename) {
  if (isAgentError(error)) return error
  const code = /** @type {{ code?: unknown }} */ (error)?.code
  const reason = error instanceof Error ? error.message : String(error)
  const permanent = code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'EISDIR'
  return new PersistenceError(`Could not ${action} in the JSON store ${filename}: ${reason}`, {
    cause: error,
    retryable: !permanent,
  })
}

/** @param {unknown} value @param {string} what */
function requireText(value, what) {
  if (typeof value !== 'string') throw new ValidationError(`${what} must be a string.`)
}

/**
 * The first index whose seq is >= `seq`.
 * @param {AnyMessage[]} messages
 * @param {number} seq
 */
function lowerBound(messages, seq) {
  let low = 0
  let high = messages.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (/** @type {AnyMessage} */ (messages[middle]).seq < seq) low = middle + 1
    else high = middle
  }
  return low
}
