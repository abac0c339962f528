// The store of a contract-kit rule as a PostgreSQL schema, shared by the contract test and by the
// fresh process of P-LIF-008 (which imports this module; it must not import vitest).
import { PostgresPersister } from '../src/index.js'

/** The server of the tests: `AGENTX_PG_URL`, by default the local trust-auth server. */
export const STORE_DATABASE_URL: string =
  process.env.AGENTX_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** The schema of a contract store. */
export function storeSchema(store: { key: string }): string {
  return `agentx_ct_${store.key.replaceAll('-', '_')}`
}

/** Opens the schema of `store` (the kit's `reopen`). */
export function reopen(store: { key: string }): PostgresPersister {
  return new PostgresPersister({
    connectionString: STORE_DATABASE_URL,
    schema: storeSchema(store),
    poolSize: 4,
  })
}
