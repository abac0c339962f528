/**
 * The text of something a tool, a check or a schema threw — always a string, whatever was thrown:
 * an `Error`'s message (its name when the message is empty, its JSON when the message is not a
 * string), or the thrown value as text. Never throws itself (`Object.create(null)` has no
 * `toString`), so a strange throw stays the tool's failure instead of becoming the send's.
 */
export function thrownText(error: unknown): string {
  if (error instanceof Error) {
    const message: unknown = error.message
    if (typeof message === 'string') return message || textOf(error.name) || 'Error'
    return jsonOf(message) || textOf(message) || textOf(error.name) || 'Error'
  }
  return textOf(error)
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value
  try {
    return String(value)
  } catch {
    try {
      return JSON.stringify(value) ?? ''
    } catch {
      return 'a value that cannot be shown as text'
    }
  }
}

function jsonOf(value: unknown): string {
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return ''
  }
}
