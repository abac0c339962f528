import type { AgentPersister } from '@agentx/core'
import { definePersisterRule, type PersisterRule } from './define-persister-rule.js'
import { fullSession, minimalSession } from './persister-fixtures.js'

const group = 'Leases'
const requires = ['leases'] as const

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Lease lengths (ms) a timing scenario is tried with, longer each time the machine was too slow to tell. */
const LEASE_LENGTHS = [300, 1_200, 4_800] as const

function leases(persister: AgentPersister) {
  return {
    claim: (id: string, owner: string, ttlMs: number) => persister.claimSession!(id, owner, ttlMs),
    release: (id: string, owner: string) => persister.releaseSession!(id, owner),
  }
}

/** Rules P-LSE-*: session leases for several processes on one store (DESIGN §10.6). */
export const leaseRules: PersisterRule[] = [
  definePersisterRule({
    id: 'P-LSE-001',
    level: 'MUST',
    group,
    requires,
    title: 'of 20 owners racing for a free session exactly one gets the lease',
    hint: 'Claim in one atomic step (a conditional UPDATE), never read-then-write.',
    async check({ persister }, check) {
      const { claim } = leases(persister)
      const owners = Array.from({ length: 20 }, (_, index) => `owner-${index}`)
      for (let round = 0; round < 5; round++) {
        const id = `race-${round}`
        await persister.saveSession(minimalSession(id))
        const results = await Promise.all(owners.map((owner) => claim(id, owner, 60_000)))
        const winners = owners.filter((_, index) => results[index])
        check.equal(winners.length, 1, `owners that got the lease on ${id} (${winners.join(', ')})`)
        const others = owners.filter((owner) => owner !== winners[0])
        const again = await Promise.all(others.map((owner) => claim(id, owner, 60_000)))
        check.ok(!again.includes(true), `another owner took the held lease on ${id}`)
      }
    },
  }),
  definePersisterRule({
    id: 'P-LSE-002',
    level: 'MUST',
    group,
    requires,
    title: 'a lease that is not renewed ends after ttlMs and another owner can claim it',
    hint: 'Store when the lease ends; a claim succeeds when that time has passed.',
    timeoutMs: 30_000,
    async check({ persister }, check) {
      const { claim } = leases(persister)
      // A claim that took the whole lease length to answer proves nothing: the scenario runs again
      // with longer leases (a loaded machine must not fail a correct store).
      for (const [attempt, ttl] of LEASE_LENGTHS.entries()) {
        const id = `expiring-${attempt}`
        await persister.saveSession(minimalSession(id))
        const started = Date.now()
        check.equal(await claim(id, 'first', ttl), true, 'the first claim')
        const taken = await claim(id, 'second', ttl)
        if (taken && Date.now() - started >= ttl && attempt < LEASE_LENGTHS.length - 1) continue
        check.equal(taken, false, 'a claim by another owner while it lasts')
        await sleep(ttl * 1.5)
        check.equal(await claim(id, 'second', 60_000), true, 'a claim by another owner after ttlMs')
        check.equal(await claim(id, 'first', ttl), false, 'the first owner after losing it')
        return
      }
    },
  }),
  definePersisterRule({
    id: 'P-LSE-003',
    level: 'MUST',
    group,
    requires,
    title: 'the owner may claim again: it keeps the lease, and the claim renews it for ttlMs',
    hint: 'A claim by the current owner succeeds and moves the end of the lease to now + ttlMs.',
    timeoutMs: 30_000,
    async check({ persister }, check) {
      const { claim } = leases(persister)
      for (const [attempt, short] of LEASE_LENGTHS.entries()) {
        const ttl = (short * 4) / 3
        const id = `renewed-${attempt}`
        await persister.saveSession(minimalSession(id))
        check.equal(await claim(id, 'owner', ttl), true, 'the first claim')
        const firstAnswered = Date.now()
        await sleep(ttl * 0.6)
        const renewing = Date.now()
        check.equal(await claim(id, 'owner', ttl), true, 'a claim by the owner (renewal)')
        await sleep(ttl * 0.6)
        const asking = Date.now()
        const taken = await claim(id, 'other', ttl)
        // Conclusive only when asked after the first lease had surely ended and answered before
        // the renewed one could end; otherwise again, with longer leases.
        const conclusive = asking > firstAnswered + ttl && Date.now() < renewing + ttl
        if (!conclusive && attempt < LEASE_LENGTHS.length - 1) continue
        check.equal(taken, false, 'another owner after the first ttl, before the renewed one')
        await sleep(ttl)
        check.equal(await claim(id, 'other', ttl), true, 'another owner after the renewed ttl')
        return
      }
    },
  }),
  definePersisterRule({
    id: 'P-LSE-004',
    level: 'MUST',
    group,
    requires,
    title: 'releaseSession frees the lease for its owner only; any other release is a no-op',
    hint: 'UPDATE … SET lease = NULL WHERE id = ? AND lease_owner = ?',
    async check({ persister }, check) {
      const { claim, release } = leases(persister)
      await persister.saveSession(minimalSession('released'))
      await claim('released', 'owner', 60_000)
      await check.resolves(() => release('released', 'intruder'), 'releaseSession by another owner')
      check.equal(await claim('released', 'third', 60_000), false, 'a claim after a release by another owner')
      await check.resolves(() => release('released', 'owner'), 'releaseSession by the owner')
      check.equal(await claim('released', 'third', 60_000), true, 'a claim right after the owner released')
      await check.resolves(() => release('unknown-session', 'owner'), 'releaseSession of an unknown session')
      await persister.saveSession(minimalSession('never-leased'))
      await check.resolves(
        () => release('never-leased', 'owner'),
        'releaseSession of a session without a lease',
      )
    },
  }),
  definePersisterRule({
    id: 'P-LSE-005',
    level: 'MUST',
    group,
    requires,
    title: 'claiming an unknown session rejects with NOT_FOUND; a bad owner or ttlMs with VALIDATION',
    hint: 'Use validateClaimArguments from @agentx/core; tell "held elsewhere" (false) from "no such session".',
    async check({ persister }, check) {
      const { claim } = leases(persister)
      await check.rejectsWithCode(
        () => claim('nowhere', 'owner', 1000),
        'NOT_FOUND',
        'claimSession of an unknown session',
      )
      await persister.saveSession(minimalSession('valid'))
      await check.rejectsWithCode(() => claim('valid', '', 1000), 'VALIDATION', "claimSession with owner ''")
      for (const ttl of [0, -5, 1.5, Number.NaN]) {
        await check.rejectsWithCode(
          () => claim('valid', 'owner', ttl),
          'VALIDATION',
          `claimSession with ttlMs ${ttl}`,
        )
      }
      check.equal(await claim('valid', 'someone', 60_000), true, 'a valid claim after the rejected ones')
    },
  }),
  definePersisterRule({
    id: 'P-LSE-008',
    level: 'MUST',
    group,
    requires: ['leases', 'durable'],
    title: 'instances opened on one store share its leases: one lease for all of them',
    hint: 'Keep leases in the storage (columns beside the session), not in the instance: several processes claim through their own instances.',
    async check(context, check) {
      const { persister } = context
      const ids = ['shared-0', 'shared-1', 'shared-2']
      for (const id of ids) await persister.saveSession(minimalSession(id))
      const beside = await Promise.all([1, 2, 3].map(() => context.openBeside(persister)))
      const instances = [persister, ...beside]
      const through = (index: number) => leases(instances[index % instances.length]!)
      const owners = Array.from({ length: 20 }, (_, index) => `owner-${index}`)
      for (const id of ids) {
        // 20 owners race for the session, spread over the four instances.
        const results = await Promise.all(
          owners.map((owner, index) => through(index).claim(id, owner, 60_000)),
        )
        const winners = owners.filter((_, index) => results[index])
        check.equal(
          winners.length,
          1,
          `owners that got the lease on ${id} through four instances (${winners.join(', ')})`,
        )
        const holder = winners[0]
        if (holder === undefined) continue
        const at = owners.indexOf(holder)
        for (let index = 0; index < instances.length; index++) {
          check.equal(
            await through(index).claim(id, 'intruder', 60_000),
            false,
            `a claim by another owner through instance ${index} while ${holder} holds ${id}`,
          )
        }
        // Released through another instance than the one that claimed it: free through a third.
        await through(at + 1).release(id, holder)
        check.equal(
          await through(at + 2).claim(id, 'newcomer', 60_000),
          true,
          `a claim after ${holder} released ${id} through another instance`,
        )
      }
    },
  }),
  definePersisterRule({
    id: 'P-LSE-006',
    level: 'MUST',
    group,
    requires,
    title: 'saveSession neither clears nor shows a lease',
    hint: 'Keep lease data beside the session (own columns), untouched by the upsert and never in SessionData.',
    async check({ persister }, check) {
      const { claim } = leases(persister)
      await persister.saveSession(fullSession('leased', { state: 'idle' }))
      await claim('leased', 'owner', 60_000)
      const updated = fullSession('leased', { state: 'active', summary: 'rewritten' })
      await persister.saveSession(updated)
      check.equal(await claim('leased', 'other', 60_000), false, 'a claim by another owner after saveSession')
      check.deepEqual(await persister.getSession('leased'), updated, 'getSession of a leased session')
      check.deepEqual(await persister.listSessions({}), [updated], 'listSessions of a leased session')
    },
  }),
  definePersisterRule({
    id: 'P-LSE-007',
    level: 'MUST',
    group,
    requires,
    title:
      'markInterrupted rewrites only active sessions of the scope without a live lease, and only their state',
    hint: "UPDATE … SET state = 'interrupted' WHERE state = 'active' AND (no lease OR lease ended) AND scope; return the count.",
    async check({ persister }, check) {
      const { claim, release } = leases(persister)
      const live = fullSession('live', { state: 'active', userId: 'u' })
      const crashed = fullSession('crashed', { state: 'active', userId: 'u', summary: 'kept as it is' })
      const expired = fullSession('expired', { state: 'active', userId: 'u' })
      const released = fullSession('released', { state: 'active', userId: 'u' })
      // Another user, whose id begins with `u`'s: the scope is equality, not a prefix.
      const elsewhere = fullSession('elsewhere', { state: 'active', userId: 'uu' })
      const idle = fullSession('idle', { state: 'idle', userId: 'u' })
      for (const session of [live, crashed, expired, released, elsewhere, idle])
        await persister.saveSession(session)
      await claim('live', 'running', 60_000)
      await claim('expired', 'crashed-process', 200)
      await claim('released', 'finished', 60_000)
      await release('released', 'finished')
      await sleep(300)
      const count = await check.resolves(() => persister.markInterrupted!({ userId: 'u' }), 'markInterrupted')
      check.equal(count, 3, 'sessions markInterrupted reported')
      check.deepEqual(
        await persister.getSession('crashed'),
        { ...crashed, state: 'interrupted' },
        'the crashed session',
      )
      check.deepEqual(
        await persister.getSession('expired'),
        { ...expired, state: 'interrupted' },
        'the session whose lease ended',
      )
      check.deepEqual(
        await persister.getSession('released'),
        { ...released, state: 'interrupted' },
        'the released session',
      )
      check.deepEqual(await persister.getSession('live'), live, 'the session with a live lease')
      check.deepEqual(
        await persister.getSession('elsewhere'),
        elsewhere,
        'the active session of another user',
      )
      check.deepEqual(await persister.getSession('idle'), idle, 'the idle session')
      check.equal(await persister.markInterrupted!(), 1, 'markInterrupted without a scope (the other user)')
    },
  }),
]
