import type BetterSqlite3 from 'better-sqlite3'

/** Which sessions {@link deleteSessionTrees} deletes: one by id, or the sessions retention selects. */
export type SessionTreeRoots =
  | { id: string }
  | { lastActivityBefore: string; states?: readonly string[]; userId?: string; appName?: string }

/** Sessions selected per statement, so that one statement never holds the write lock for long. */
const CHUNK = 500

/**
 * Deletes the selected sessions and every session below them (by `parent_session_id`, any
 * depth), chunk by chunk; the messages go by the foreign key's `ON DELETE CASCADE`. Returns how
 * many sessions were deleted.
 *
 * One statement per chunk: a recursive CTE seeds with the selected sessions (an index range on
 * `last_activity`, or the primary key) and follows the `sessions_parent` index down; `UNION`
 * stops at a cycle of parent ids. Retention skips a session whose lease is live (P-RET-005) and
 * selects only roots: a child is deleted with its parent's tree (P-RET-006).
 */
export function deleteSessionTrees(database: BetterSqlite3.Database, roots: SessionTreeRoots): number {
  const parameters: unknown[] = []
  let seed: string
  if ('id' in roots) {
    seed = 'select id from sessions where id = ?'
    parameters.push(roots.id)
  } else {
    // A session under a live lease runs a send (maybe in another process): retention leaves it.
    // A child goes with its parent's tree, never on its own (an orphan, whose parent is gone, may go).
    const conditions = [
      'last_activity < ?',
      '(lease_owner is null or lease_expires_at <= ?)',
      '(parent_session_id is null or not exists (select 1 from sessions as parent where parent.id = sessions.parent_session_id))',
    ]
    parameters.push(roots.lastActivityBefore, Date.now())
    if (roots.states !== undefined) {
      conditions.push(`state in (${roots.states.map(() => '?').join(', ')})`)
      parameters.push(...roots.states)
    }
    if (roots.userId !== undefined) {
      conditions.push('user_id = ?')
      parameters.push(roots.userId)
    }
    if (roots.appName !== undefined) {
      conditions.push('app_name = ?')
      parameters.push(roots.appName)
    }
    seed = `select id from (select id from sessions where ${conditions.join(' and ')} limit ${CHUNK})`
  }
  const statement = database.prepare(
    `with recursive doomed(id) as (${seed} union select child.id from sessions as child join doomed on child.parent_session_id = doomed.id)
delete from sessions where id in (select id from doomed)`,
  )
  let deleted = 0
  for (;;) {
    const { changes } = statement.run(parameters)
    deleted += changes
    if ('id' in roots || changes === 0) return deleted
  }
}
