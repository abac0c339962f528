// Runs better-sqlite3 in worker threads that exit while the garbage collector still has prepared
// statements to finalize: each worker prepares and drops thousands of statements, keeps some
// alive, closes its database or leaves it open, and is terminated. better-sqlite3 12 aborted the
// whole process here on Node 24 (`Assertion failed: (env) != nullptr` in
// `node::RemoveEnvironmentCleanupHook`, from `Statement::~Statement()`).
//
// Usage: node finalize-statements-in-workers.cjs <folder of the better-sqlite3 package> [workers]
// Prints one line with the counts and exits 0 when every worker ran and the process survived.
'use strict'
const { isMainThread, parentPort, Worker, workerData } = require('node:worker_threads')

const STATEMENTS_PER_WORKER = 10_000
const KEPT_PER_WORKER = 200

if (isMainThread) {
  const [betterSqlite3, workersArgument = '10'] = process.argv.slice(2)
  if (!betterSqlite3) {
    console.error('usage: node finalize-statements-in-workers.cjs <better-sqlite3 folder> [workers]')
    process.exit(2)
  }
  const workers = Number(workersArgument)
  const run = async () => {
    let statements = 0
    for (let index = 0; index < workers; index++) {
      const worker = new Worker(__filename, { workerData: { betterSqlite3, close: index % 2 === 0 } })
      const prepared = await new Promise((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
      })
      statements += prepared
      await worker.terminate()
    }
    console.log(`finalized ${statements} statements in ${workers} workers`)
  }
  run().catch((error) => {
    console.error(error)
    process.exit(1)
  })
} else {
  const Database = require(workerData.betterSqlite3)
  const database = new Database(':memory:')
  database.exec('create table notes (id integer primary key, body text not null)')
  const insert = database.prepare('insert into notes (body) values (?)')
  for (let index = 0; index < 100; index++) insert.run(`note ${index}`)
  let prepared = 1
  for (let index = 0; index < STATEMENTS_PER_WORKER; index++, prepared++) {
    database.prepare(`select body from notes where id = ${(index % 100) + 1}`).get()
  }
  const kept = []
  for (let index = 0; index < KEPT_PER_WORKER; index++, prepared++) {
    kept.push(database.prepare('select count(*) as count from notes'))
  }
  if (kept[0].get().count !== 100) throw new Error('the notes table lost rows')
  if (workerData.close) database.close()
  globalThis.keptStatements = kept
  parentPort.postMessage(prepared)
}
