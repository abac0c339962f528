// An application process on the test database, for the two-process agent tests. Started by
// test/child-process.ts with the TypeScript source hooks; prints one JSON line.
//
//   node agent-worker.mjs sends <url> <schema> <sessionId> <label> <count> <durability>
//       prints { ready } once set up, waits for a line on stdin (the start signal, so that two
//       processes really run at the same time however slowly each started), then sends `count`
//       messages to the session (a scripted model answers each, slowly), retrying a
//       send that another process holds (SessionBusyError); prints { sent, busy, errors }
//   node agent-worker.mjs long <url> <schema> <sessionId> <leaseTtlMs>
//       one send whose model never finishes; prints { started } and waits to be killed
//   node agent-worker.mjs start <url> <schema>
//       initialize() only (repairs sessions left active); prints { initialized }
//   node agent-worker.mjs watch <url> <schema> <leaseTtlMs>
//       initialize(), prints { initialized } and keeps the agent open (its lease sweep runs) until killed
//   node agent-worker.mjs delete <url> <schema> <sessionId>
//       agent.deleteSession(); prints { deleted: true } or { error: <code> }
//   node agent-worker.mjs no-close <url> <schema> <count>
//       sends `count` messages, closes the agent but never the persister it gave the agent, then
//       issues `count` saveMessage calls without awaiting them and ends its script; prints { sent }
const { createAgent, isAgentError } = await import('@agentx/core')
const { ScriptedAdapter, textTurn } = await import('@agentx/core/testing')
const { createPostgresPersister } = await import(new URL('../src/index.ts', import.meta.url).href)

const [command, connectionString, schema, ...args] = process.argv.slice(2)
const persister = createPostgresPersister({ connectionString, schema, poolSize: 2 })
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

if (command === 'sends') {
  const [sessionId, label, count, durability] = args
  const turns = Array.from({ length: Number(count) }, (_, i) => ({
    events: textTurn(`${label} reply ${i}`, { chunkSize: 3 }),
    delayMs: 4,
  }))
  const agent = createAgent(
    { durability, leaseTtlMs: 5_000 },
    { adapter: new ScriptedAdapter(turns), persister },
  )
  await agent.initialize()
  const session = await agent.getSession(sessionId)
  print({ ready: true })
  await new Promise((resolve) => process.stdin.once('data', resolve))
  process.stdin.pause()
  let sent = 0
  let busy = 0
  const errors = []
  while (sent < Number(count)) {
    try {
      await session.send(`${label} ${sent}`)
      sent += 1
    } catch (error) {
      if (isAgentError(error) && error.code === 'SESSION_BUSY') {
        busy += 1
        await sleep(2 + Math.random() * 5)
      } else {
        errors.push(isAgentError(error) ? error.code : String(error))
        break
      }
    }
  }
  await agent.close()
  print({ sent, busy, errors })
} else if (command === 'long') {
  // A send whose model never finishes: the process is killed while it runs.
  const [sessionId, leaseTtlMs] = args
  const adapter = new ScriptedAdapter([{ events: textTurn('thinking…'), waitForAbort: true }])
  const agent = createAgent({ leaseTtlMs: Number(leaseTtlMs) }, { adapter, persister })
  const session = await agent.getSession(sessionId)
  void session.send('a long task').catch(() => undefined)
  while (session.state !== 'active') await sleep(5)
  await sleep(50)
  print({ started: true })
  // Runs until killed (never reaches the close below).
  await new Promise(() => setInterval(() => {}, 60_000))
} else if (command === 'watch') {
  // An agent that stays up: once per lease length it marks `interrupted` the sessions of a process
  // that stopped renewing its lease.
  const agent = createAgent({ leaseTtlMs: Number(args[0]) }, { adapter: new ScriptedAdapter([]), persister })
  await agent.initialize()
  print({ initialized: true })
  // Runs until killed.
  await new Promise(() => setInterval(() => {}, 60_000))
} else if (command === 'start') {
  const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
  await agent.initialize()
  await agent.close()
  print({ initialized: true })
} else if (command === 'delete') {
  const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
  try {
    await agent.deleteSession(args[0])
    print({ deleted: true })
  } catch (error) {
    print({ error: isAgentError(error) ? error.code : String(error) })
  }
  await agent.close()
} else if (command === 'no-close') {
  const count = Number(args[0])
  const turns = Array.from({ length: count }, (_, i) => textTurn(`reply ${i}`))
  const agent = createAgent({}, { adapter: new ScriptedAdapter(turns), persister })
  const session = await agent.createSession({ metadata: { probe: 'no-close' } })
  for (let i = 0; i < count; i++) await session.send(`message ${i}`)
  await agent.close()
  // Writes in flight when the script ends keep the process alive until they are stored.
  for (let i = 0; i < count; i++) {
    const seq = 2 * count + i
    void persister.saveMessage(session.id, {
      id: `late-${i}`,
      sessionId: session.id,
      seq,
      type: 'user',
      content: `late ${i}`,
      timestamp: new Date().toISOString(),
    })
  }
  print({ sent: count, sessionId: session.id })
}
if (command !== 'no-close') await persister.close()
