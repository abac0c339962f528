// A separate process on the test database, for the multi-process tests. Started by
// test/child-process.ts with the TypeScript source hooks; prints one JSON line per result.
//
//   node postgres-worker.mjs race <url> <schema> <startAtMs> <owners> <sessionId>…   each owner claims each session at startAtMs
//   node postgres-worker.mjs hold <url> <schema> <owner> <ttlMs> <sessionId>         claims, prints, then waits to be killed
//   node postgres-worker.mjs read <url> <schema>                                     prints every session with its messages
const { createPostgresPersister } = await import(new URL('../src/index.ts', import.meta.url).href)

const [command, connectionString, schema, ...args] = process.argv.slice(2)
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`)

if (command === 'race') {
  const [startAt, owners, ...sessionIds] = args
  const names = owners.split(',')
  // One pool connection per owner, all connected and the schema checked before the race.
  const persister = createPostgresPersister({ connectionString, schema, poolSize: names.length })
  await Promise.all(names.map(() => persister.getSession(sessionIds[0])))
  while (Date.now() < Number(startAt)) {
    // Spin: a timer would wake each process up to a millisecond apart.
  }
  const results = await Promise.all(
    names.map(async (owner) => {
      const won = []
      for (const id of sessionIds) if (await persister.claimSession(id, owner, 60_000)) won.push(id)
      return [owner, won]
    }),
  )
  print(Object.fromEntries(results))
  await persister.close()
} else if (command === 'hold') {
  const [owner, ttlMs, sessionId] = args
  const persister = createPostgresPersister({ connectionString, schema, poolSize: 1 })
  print({ claimed: await persister.claimSession(sessionId, owner, Number(ttlMs)) })
  setInterval(() => {}, 60_000)
} else if (command === 'read') {
  const persister = createPostgresPersister({ connectionString, schema, poolSize: 1 })
  const sessions = await persister.listSessions({ includeChildren: true })
  const messages = {}
  for (const session of sessions) messages[session.id] = await persister.getMessages(session.id)
  print({ sessions, messages })
  await persister.close()
} else {
  throw new Error(`unknown command ${command}`)
}
