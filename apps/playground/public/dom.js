// Small DOM and formatting helpers. Text always goes in as text nodes (textContent), never as HTML.

/** An element with a class and text. */
export function el(tag, className, text) {
  const node = document.createElement(tag)
  if (className) node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

/** A `<button type="button">` with a label, a test id and a click handler. */
export function button(label, className, testid, onClick) {
  const node = el('button', className, label)
  node.type = 'button'
  if (testid) node.dataset.testid = testid
  if (onClick) node.addEventListener('click', onClick)
  return node
}

export const numberFormat = new Intl.NumberFormat('en')
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })

export function timeAgo(iso) {
  const seconds = Math.round((Date.parse(iso) - Date.now()) / 1000)
  const abs = Math.abs(seconds)
  if (abs < 45) return 'just now'
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute')
  if (abs < 86_400) return relative.format(Math.round(seconds / 3600), 'hour')
  return relative.format(Math.round(seconds / 86_400), 'day')
}

export function tokens(usage) {
  if (!usage?.totalTokens) return '0 tokens'
  return `${numberFormat.format(usage.totalTokens)} tokens (${numberFormat.format(usage.inputTokens)} in · ${numberFormat.format(usage.outputTokens)} out)`
}

export function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`
}

export function textOf(content) {
  if (typeof content === 'string') return content
  return content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('')
}

export function formatJson(value) {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2)
    } catch {
      return value
    }
  }
  return JSON.stringify(value, null, 2)
}

export function resultText(content) {
  return formatJson(typeof content === 'string' ? content : textOf(content))
}

export function setBadge(node, sessionState) {
  node.textContent = sessionState.replace('_', ' ')
  node.className = `badge state-${sessionState}`
  node.dataset.state = sessionState
}

/** Decodes a location hash into a session id; a malformed hash (bad percent-encoding) is no id. */
export function idFromHash(hash) {
  const raw = hash.startsWith('#') ? hash.slice(1) : hash
  if (raw === '') return undefined
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}
