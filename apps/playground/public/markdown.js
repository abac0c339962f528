// A small, safe Markdown renderer for model output. It builds DOM nodes with createElement and
// text nodes only — model text never reaches innerHTML, so markup in a reply is shown as text.

const SAFE_LINK = /^(https?:\/\/|mailto:)/i

/**
 * Renders Markdown (paragraphs, headings, lists, block quotes, fenced code, inline code, bold,
 * italic, links) into a DocumentFragment.
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment()
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n')
  let index = 0
  while (index < lines.length) {
    const line = lines[index]
    const fence = /^\s*(```+|~~~+)\s*([\w+-]*)\s*$/.exec(line)
    if (fence) {
      const code = []
      index++
      while (index < lines.length && !lines[index].trim().startsWith(fence[1])) code.push(lines[index++])
      index++
      const pre = element('pre', 'code-block')
      const codeElement = element('code')
      if (fence[2]) codeElement.dataset.language = fence[2]
      codeElement.textContent = code.join('\n')
      pre.append(codeElement)
      fragment.append(pre)
      continue
    }
    if (line.trim() === '') {
      index++
      continue
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading) {
      const level = Math.min(heading[1].length + 2, 6)
      const node = element(`h${level}`)
      appendInline(node, heading[2])
      fragment.append(node)
      index++
      continue
    }
    if (/^\s*>/.test(line)) {
      const quoted = []
      while (index < lines.length && /^\s*>/.test(lines[index]))
        quoted.push(lines[index++].replace(/^\s*>\s?/, ''))
      const quote = element('blockquote')
      quote.append(renderMarkdown(quoted.join('\n')))
      fragment.append(quote)
      continue
    }
    const listMatch = /^\s*([-*+]|\d+[.)])\s+/.exec(line)
    if (listMatch) {
      const ordered = /\d/.test(listMatch[1])
      const list = element(ordered ? 'ol' : 'ul')
      while (index < lines.length) {
        const item = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[index])
        if (!item || /\d/.test(item[1]) !== ordered) break
        const li = element('li')
        appendInline(li, item[2])
        list.append(li)
        index++
      }
      fragment.append(list)
      continue
    }
    const paragraph = []
    while (
      index < lines.length &&
      lines[index].trim() !== '' &&
      !/^\s*(```|~~~|#{1,6}\s|>|[-*+]\s|\d+[.)]\s)/.test(lines[index])
    ) {
      paragraph.push(lines[index++])
    }
    if (paragraph.length === 0) paragraph.push(lines[index++])
    const p = element('p')
    paragraph.forEach((part, i) => {
      if (i > 0) p.append(document.createElement('br'))
      appendInline(p, part)
    })
    fragment.append(p)
  }
  return fragment
}

const INLINE =
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*]+?)\*\*|__([^_]+?)__|\*([^*\s][^*]*?)\*|(?<![\w])_([^_\s][^_]*?)_(?![\w])|\[([^\]]+)\]\(([^()\s]+)\)/g

/**
 * Appends inline Markdown to `parent` as elements and text nodes.
 * @param {Node} parent
 * @param {string} text
 */
function appendInline(parent, text) {
  let last = 0
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) parent.append(document.createTextNode(text.slice(last, match.index)))
    last = match.index + match[0].length
    if (match[1] !== undefined) {
      const code = element('code', 'inline-code')
      code.textContent = match[2]
      parent.append(code)
    } else if (match[3] !== undefined || match[4] !== undefined) {
      const strong = element('strong')
      appendInline(strong, match[3] ?? match[4])
      parent.append(strong)
    } else if (match[5] !== undefined || match[6] !== undefined) {
      const em = element('em')
      appendInline(em, match[5] ?? match[6])
      parent.append(em)
    } else if (match[7] !== undefined) {
      const href = match[8]
      if (SAFE_LINK.test(href)) {
        const link = element('a')
        link.href = href
        link.target = '_blank'
        link.rel = 'noopener noreferrer nofollow'
        appendInline(link, match[7])
        parent.append(link)
      } else {
        parent.append(document.createTextNode(match[0]))
      }
    }
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)))
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
