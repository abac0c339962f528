// Syntax highlighting of code blocks with highlight.js (its core and a few grammars, served by the
// playground itself). highlight.js returns HTML; it is read in an inert document and only its
// <span class="hljs-…"> elements and text are rebuilt in the page, so nothing else can get through.
import hljs from '/vendor/highlight.js'
import bash from '/vendor/highlight/bash.js'
import css from '/vendor/highlight/css.js'
import diff from '/vendor/highlight/diff.js'
import go from '/vendor/highlight/go.js'
import java from '/vendor/highlight/java.js'
import javascript from '/vendor/highlight/javascript.js'
import json from '/vendor/highlight/json.js'
import python from '/vendor/highlight/python.js'
import rust from '/vendor/highlight/rust.js'
import shell from '/vendor/highlight/shell.js'
import sql from '/vendor/highlight/sql.js'
import typescript from '/vendor/highlight/typescript.js'
import xml from '/vendor/highlight/xml.js'
import yaml from '/vendor/highlight/yaml.js'

const grammars = {
  bash,
  css,
  diff,
  go,
  java,
  javascript,
  json,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
}
for (const [name, grammar] of Object.entries(grammars)) hljs.registerLanguage(name, grammar)
hljs.configure({ ignoreUnescapedHTML: true })

/** Longer code is shown plain: highlighting it on every streamed frame would cost too much. */
const MAX_HIGHLIGHTED = 100_000
const SAFE_CLASS = /^(hljs(-[\w-]+)?|language-[\w-]+|[\w-]+_)$/

/** The registered language for a fence's info string (`ts`, `py`, `html` … are aliases), or undefined. */
export function languageOf(info) {
  const name = String(info ?? '')
    .trim()
    .split(/\s+/)[0]
    .toLowerCase()
  return name !== '' && hljs.getLanguage(name) ? name : undefined
}

/**
 * Fills `code` (a <code> element) with `text`, highlighted when `language` is known. Returns
 * whether it was highlighted.
 */
export function highlightInto(code, text, language) {
  if (language === undefined || text.length > MAX_HIGHLIGHTED) {
    code.textContent = text
    return false
  }
  let html
  try {
    html = hljs.highlight(text, { language, ignoreIllegals: true }).value
  } catch {
    code.textContent = text
    return false
  }
  const inert = new DOMParser().parseFromString(`<pre><code>${html}</code></pre>`, 'text/html')
  code.replaceChildren(...rebuild(inert.querySelector('code')))
  code.classList.add('hljs')
  // Whatever happens in rebuilding, the text shown is exactly the code.
  if (code.textContent !== text) code.textContent = text
  return true
}

/** Page nodes for the children of an inert node: spans with highlight.js classes, and text. */
function rebuild(parent) {
  const nodes = []
  for (const child of parent.childNodes) {
    if (child.nodeType === Node.TEXT_NODE) nodes.push(document.createTextNode(child.data))
    else if (child.nodeType === Node.ELEMENT_NODE && child.tagName === 'SPAN') {
      const span = document.createElement('span')
      const classes = [...child.classList].filter((name) => SAFE_CLASS.test(name))
      if (classes.length > 0) span.className = classes.join(' ')
      span.append(...rebuild(child))
      nodes.push(span)
    } else if (child.nodeType === Node.ELEMENT_NODE) {
      nodes.push(document.createTextNode(child.textContent ?? ''))
    }
  }
  return nodes
}
