import { ValidationError } from '../errors/validation-error.js'
import { checkAgainst, type SchemaLike } from './schema.js'

/**
 * The structured output of a reply: its text parsed as JSON (a Markdown code fence around it is
 * tolerated) and checked against the schema. Throws a ValidationError of code `OUTPUT_INVALID`.
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
    throw new ValidationError(
      `The reply does not match the output schema (${checked.issues.join('; ')}); it is stored as it is.`,
      { code: 'OUTPUT_INVALID' },
    )
  }
  return { value: checked.value }
}
