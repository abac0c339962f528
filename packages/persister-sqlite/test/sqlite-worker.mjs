// A separate process on one SQLite file, for the multi-process tests. Started by
// test/child-process.ts with the TypeScript source hooks; prints one JSON line per result.
//
//   node sqlite-worker.mjs race <file> <owner> <startAtMs> <sessionId>…   claims each session at startAtMs
//   node sqlite-worker.mjs hold <file> <owner> <ttlMs> <sessionId>        claims, prints, then waits to be killed
//   node sqlite-worker.mjs read <file>                                     prints every session with its messages
//   node sqlite-worker.mjs open-new <folder> <count> <startAtMs> <stepMs>  opens <folder>/f<i>.db, a new file
//                                  each, at startAtMs + i × stepMs; prints the error codes of the opens that failed
const { createSqlitePersister } = await import(new URL('../src/index.ts', import.meta.url).href)

const [command, filename, ...args] = process.argv.slice(2)
const persister = createSqlitePersister({ filename, busyTimeoutMs: 20_000 })
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`)

if (command === 'race') {
  const [owner, startAt, ...sessionIds] = args
  // Open and migrate first, so that the race is about the claims only.
  await persister.getSession(sessionIds[0])
  while (Date.now() < Number(startAt)) {
    // Spin: a timer would wake each process up to a millisecond apart.
  }
  const results = await Promise.all(sessionIds.map((id) => persister.claimSession(id, owner, 60_000)))
  print(Object.fromEntries(sessionIds.map((id, index) => [id, results[index]])))
  await persister.close()
} else if (command === 'hold') {
  const [owner, ttlMs, sessionId] = args
  print({ claimed: await persister.claimSession(sessionId, owner, Number(ttlMs)) })
  setInterval(() => {}, 60_000)
} else if (command === 'read') {
  const sessions = await persister.listSessions({ includeChildren: true })
  const messages = {}
  for (const session of sessions) messages[session.id] = await persister.getMessages(session.id)
  print({ sessions, messages })
  await persister.close()
} else if (command === 'open-new') {
  const [count, startAt, step] = args.map(Number)
  const failures = []
  for (let index = 0; index < count; index++) {
    const wait = startAt + index * step - Date.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    // The default busyTimeoutMs, as an application gets it.
    const store = createSqlitePersister({ filename: `${filename}/f${index}.db` })
    try {
      await store.getSession('any')
    } catch (error) {
      failures.push(`${error.code}: ${error.message}`)
    }
    await store.close()
  }
  print({ failures })
  await persister.close()
} else {
  throw new Error(`unknown command ${command}`)
}
