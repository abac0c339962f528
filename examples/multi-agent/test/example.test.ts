// The example script (src/support-desk.mjs) run as a user runs it, in its own node process:
// its output, and what it left in the SQLite file (read directly).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { temporaryFolder } from './helpers/files.js'
import { killAll, startNode } from './helpers/node-process.js'
import { storedMessages, storedSessions, storedTurns, toolUsesOf } from './helpers/read-store.js'

const PACKAGE = fileURLToPath(new URL('..', import.meta.url))

/** Runs the example to its end; resolves to its exit code and output. */
async function runExample(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const process = startNode(['src/support-desk.mjs', ...args], { cwd: PACKAGE })
  const exit = await process.exited
  return { code: exit.code, stdout: process.output(), stderr: process.errors() }
}

describe('the support desk example', () => {
  let folder: ReturnType<typeof temporaryFolder>
  let filename: string

  beforeEach(() => {
    folder = temporaryFolder('example')
    filename = join(folder.path, 'support-desk.db')
  })
  afterEach(async () => {
    await killAll()
    folder.remove()
  })

  it('triage hands the customer over to billing, which asks the researcher in a child session; all of it is stored', async () => {
    const run = await runExample(['--data', folder.path])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const lines = run.stdout.split('\n')
    const you = lines.indexOf('you> I was charged twice for invoice INV-1042. Can I get my money back?')
    expect(you).toBeGreaterThan(0)
    expect(lines.slice(you + 1, you + 9)).toEqual([
      "triage> That's a billing question: I'm handing you over to our billing team.",
      '[handoff] triage → billing',
      '  [billing calls lookup_invoice] {"invoice":"INV-1042"}',
      '  [lookup_invoice] INV-1042: Dana Ortiz, EUR 49.00, charged 2 time(s) (2025-03-02, 2025-03-02).',
      '  [billing calls researcher] {"task":"What does the handbook say about a customer charged twice for one invoice?"}',
      '      [researcher calls search_policies] {"query":"charged twice, duplicate charge"}',
      expect.stringMatching(/^ {6}\[search_policies\] §4\.2 Duplicate charges: /),
      '    researcher> §4.2 Duplicate charges: the extra charge is refunded in full within 5 business days, no reason needed.',
    ])
    expect(lines[you + 9]).toMatch(/^billing> You were charged twice for INV-1042/)

    // On disk: the conversation, and the researcher's child session linked to it.
    const rows = storedSessions(filename)
    expect(rows).toHaveLength(2)
    const parent = rows.find((row) => row.parentSessionId === null)!
    const child = rows.find((row) => row.parentSessionId !== null)!
    expect(parent).toMatchObject({ state: 'idle', activeAgent: 'billing' })
    expect(storedTurns(filename, parent.id)).toEqual([
      ['user', null],
      ['agent', 'default'],
      ['tool', null],
      ['agent', 'billing'],
      ['tool', null],
      ['agent', 'billing'],
      ['tool', null],
      ['agent', 'billing'],
    ])
    const researcherCall = toolUsesOf(storedMessages(filename, parent.id)[5])[0]!
    expect(researcherCall.name).toBe('researcher')
    expect(child).toMatchObject({
      id: `${parent.id}/${researcherCall.id}`,
      state: 'idle',
      parentSessionId: parent.id,
      parentToolUseId: researcherCall.id,
      activeAgent: 'researcher',
    })
    expect(storedTurns(filename, child.id)).toEqual([
      ['user', null],
      ['agent', 'researcher'],
      ['tool', null],
      ['agent', 'researcher'],
    ])
    expect(storedMessages(filename, child.id)[0]?.content).toBe(
      'What does the handbook say about a customer charged twice for one invoice?',
    )
    expect(run.stdout).toContain(`session ${parent.id}: 8 messages, active agent billing`)
    expect(run.stdout).toContain(
      `child session ${child.id}: 4 messages (researcher for call ${researcherCall.id})`,
    )
  })

  it('--continue, in a new process, goes on with billing: the agent that answered last, read from the store', async () => {
    expect((await runExample(['--data', folder.path])).code).toBe(0)
    const [parent] = storedSessions(filename).filter((row) => row.parentSessionId === null)

    const run = await runExample(['--data', folder.path, '--continue'])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`session ${parent!.id} (continued: billing answered last)`)
    expect(run.stdout).toContain(
      'you> When will I see the money?\nbilling> The refund of EUR 49.00 is on its way: you will see it within 5 business days.\n',
    )
    expect(run.stdout).not.toContain('triage>')
    expect(storedSessions(filename)).toHaveLength(2)
    expect(storedTurns(filename, parent!.id).slice(8)).toEqual([
      ['user', null],
      ['agent', 'billing'],
    ])
    expect(storedSessions(filename).find((row) => row.id === parent!.id)?.activeAgent).toBe('billing')
  })

  it('--continue with nothing stored says so and exits 1', async () => {
    const run = await runExample(['--data', folder.path, '--continue'])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('Nothing to continue')
    expect(existsSync(filename)).toBe(true)
    expect(storedSessions(filename)).toEqual([])
  })
})
