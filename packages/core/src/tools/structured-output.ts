import { ValidationError } from '../errors/validation-error.js'
import { checkAgainst, type SchemaLike } from './schema.js'

/**
 * The structured output of a reply: its text parsed as JSON (a Markdown code fence around it is
 * tolerated) and checked against the schema. Throws a ValidationError of code `OUTPUT_INVALID` —
 * also when a Standard Schema's `validate` throws (the cause) or returns no result.
 */
export async function parseOutput(text: string, schema: SchemaLike): Promise<{ value: unknown }> {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text)
  let parsed: unknown
  try {
    parsed = JSON.parse(fenced ? fenced[1]! : text)
  } catch (cause) {
    throw new ValidationError(
      'The reply is not the JSON the output schema asks for; it is stored as it is.',
      {
        code: 'OUTPUT_INVALID',
        cause,
      },
    )
  }
  const checked = await checkAgainst(schema, parsed)
  if (!checked.ok) {
    // A validator that throws or answers nonsense fails the schema, not the model; the send fails
    // the same way (OUTPUT_INVALID, the reply kept, `retry()` possible), with the thrown error as cause.
    const message = checked.schemaFailed
      ? `The output schema could not check the reply (${checked.issues.join('; ')}); it is stored as it is.`
      : `The reply does not match the output schema (${checked.issues.join('; ')}); it is stored as it is.`
    throw new ValidationError(message, { code: 'OUTPUT_INVALID', cause: checked.cause })
  }
  // A fresh JSON copy (see checkAgainst), or what the Standard Schema made of it.
  return { value: checked.value }
}
