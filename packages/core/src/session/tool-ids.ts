/**
 * The id a tool call of one response is kept under: its own, unless an earlier call of the same
 * response took it (servers speaking the OpenAI protocol may number every call `call_0`). Then the
 * first free `<id>_2`, `<id>_3` … Without this the second call's result would answer both calls.
 * Called in response order for the `tool-call` events and again for the final content, so both
 * give the same call the same id.
 */
export function distinctToolId(id: string, taken: Set<string>): string {
  let candidate = id
  for (let n = 2; taken.has(candidate); n++) candidate = `${id}_${n}`
  taken.add(candidate)
  return candidate
}
