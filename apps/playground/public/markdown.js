// Markdown of model output, parsed by markdown-it (CommonMark + tables and strikethrough, raw HTML
// off) and built into DOM nodes from its tokens with createElement and text nodes — model text
// never reaches innerHTML. Only known tags are made, links only to http(s) and mailto, no images
// (a reply cannot make the page load anything), and code blocks get highlighting and a copy button.
import MarkdownIt from '/vendor/markdown-it.js'
import { highlightInto, languageOf } from './code-highlight.js'

const markdown = new MarkdownIt('default', {
  html: false,
  linkify: true,
  // A line break in a chat reply is meant as one.
  breaks: true,
  typographer: false,
})

const SAFE_LINK = /^(https?:\/\/|mailto:)/i
/** The block and inline tags markdown-it makes (headings are moved two levels down: the page has h1 and h2). */
const TAGS = new Set([
  'p',
  'blockquote',
  'ul',
  'ol',
  'li',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'strong',
  'em',
  's',
  'a',
  'hr',
  'br',
])
const HEADING = { h1: 'h3', h2: 'h4', h3: 'h5', h4: 'h6', h5: 'h6', h6: 'h6' }

/**
 * Renders Markdown into a DocumentFragment.
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment()
  build(markdown.parse(String(text), {}), fragment)
  return fragment
}

/**
 * Appends the DOM of a token stream to `root`: `*_open` tokens open an element, `*_close` tokens
 * close it, the others are leaves (text, code, breaks) or hold inline children.
 */
function build(tokens, root) {
  const stack = [root]
  const top = () => stack[stack.length - 1]
  for (const token of tokens) {
    if (token.nesting === 1) {
      // Paragraphs of tight list items are hidden: their content goes straight into the item.
      if (token.hidden) {
        stack.push(top())
        continue
      }
      const node = openElement(token)
      if (token.tag === 'table') {
        // A wide table scrolls inside its wrapper, not the conversation.
        const wrapper = element('div', 'table-wrapper')
        wrapper.append(node)
        top().append(wrapper)
      } else top().append(node)
      stack.push(node)
      continue
    }
    if (token.nesting === -1) {
      if (stack.length > 1) stack.pop()
      continue
    }
    switch (token.type) {
      case 'inline':
        build(token.children ?? [], top())
        break
      case 'text':
      case 'html_inline':
      case 'html_block':
        // Raw HTML is off, so markdown-it makes none of these from HTML; were it to, it stays text.
        top().append(document.createTextNode(token.content))
        break
      case 'softbreak':
      case 'hardbreak':
        top().append(document.createElement('br'))
        break
      case 'code_inline': {
        const code = element('code', 'inline-code')
        code.textContent = token.content
        top().append(code)
        break
      }
      case 'fence':
      case 'code_block':
        top().append(codeBlock(token.content, token.type === 'fence' ? token.info : ''))
        break
      case 'image':
        // Never loaded: shown as its description (a link when the address is safe).
        top().append(imageLink(token))
        break
      case 'hr':
        top().append(document.createElement('hr'))
        break
      default:
        if (token.content) top().append(document.createTextNode(token.content))
        break
    }
  }
}

function openElement(token) {
  const tag = HEADING[token.tag] ?? (TAGS.has(token.tag) ? token.tag : 'div')
  const node = document.createElement(tag)
  if (tag === 'a') {
    const href = token.attrGet('href') ?? ''
    // An unsafe link is no link: its text stays, as text.
    if (!SAFE_LINK.test(href)) return document.createElement('span')
    node.href = href
    node.target = '_blank'
    node.rel = 'noopener noreferrer nofollow'
    const title = token.attrGet('title')
    if (title) node.title = title
  } else if (tag === 'ol') {
    const start = token.attrGet('start')
    if (start !== null && /^\d{1,9}$/.test(start)) node.start = Number(start)
  } else if (tag === 'th' || tag === 'td') {
    // The page's policy allows no style attributes: alignment is a class.
    const align = /text-align:(left|center|right)/.exec(token.attrGet('style') ?? '')?.[1]
    if (align) node.className = `align-${align}`
  }
  return node
}

function imageLink(token) {
  const alt = token.content || token.attrGet('alt') || 'image'
  const src = token.attrGet('src') ?? ''
  if (!/^https?:\/\//i.test(src)) return document.createTextNode(alt)
  const link = element('a')
  link.href = src
  link.target = '_blank'
  link.rel = 'noopener noreferrer nofollow'
  link.textContent = `🖼 ${alt}`
  return link
}

/** A code block: its language, a Copy button, and the code (highlighted when the language is known). */
export function codeBlock(content, info) {
  const text = content.endsWith('\n') ? content.slice(0, -1) : content
  const language = languageOf(info)
  const block = element('div', 'code-block')
  block.dataset.testid = 'code-block'
  const head = element('div', 'code-head')
  const label = element('span', 'code-language')
  label.textContent =
    String(info ?? '')
      .trim()
      .split(/\s+/)[0] || 'text'
  const copy = element('button', 'code-copy')
  copy.type = 'button'
  copy.textContent = 'Copy'
  copy.dataset.testid = 'copy-code'
  copy.setAttribute('aria-label', 'Copy the code')
  copy.addEventListener('click', () => void copyText(text, copy))
  head.append(label, copy)
  const pre = element('pre')
  const code = element('code')
  if (language) code.dataset.language = language
  highlightInto(code, text, language)
  pre.append(code)
  block.append(head, pre)
  return block
}

async function copyText(text, button) {
  let copied = false
  try {
    await navigator.clipboard.writeText(text)
    copied = true
  } catch {
    // No clipboard API (a page not served from localhost or HTTPS): copy a selection instead.
    const area = document.createElement('textarea')
    area.value = text
    area.setAttribute('readonly', '')
    area.className = 'visually-hidden'
    document.body.append(area)
    area.select()
    copied = document.execCommand('copy')
    area.remove()
  }
  button.textContent = copied ? 'Copied' : 'Copy failed'
  button.dataset.copied = String(copied)
  setTimeout(() => {
    button.textContent = 'Copy'
    delete button.dataset.copied
  }, 1500)
}

/**
 * @param {string} tag
 * @param {string} [className]
 * @returns {HTMLElement}
 */
function element(tag, className) {
  const node = document.createElement(tag)
  if (className) node.className = className
  return node
}
