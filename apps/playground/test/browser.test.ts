/// <reference lib="dom" />
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ContentBlock } from '@agentx/core'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Playground, startPlayground } from '../src/start-playground.js'
import { CHROMIUM_ARGS, CHROMIUM_PATH, chromiumMissingMessage } from './ensure-chromium.js'

const OUTPUT_DIR = fileURLToPath(new URL('../test-output/', import.meta.url))

let workspace: string
let playground: Playground
let browser: Browser
let page: Page

async function startServer(): Promise<Playground> {
  return startPlayground({
    env: {},
    workspace,
    port: 0,
    demoDelayMs: 12,
    retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 5 },
  })
}

function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

async function currentSessionId(): Promise<string> {
  return decodeURIComponent(new URL(page.url()).hash.slice(1))
}

async function send(text: string): Promise<void> {
  await page.getByTestId('message-input').fill(text)
  await page.getByTestId('message-input').press('Enter')
}

/** Waits until the reply streaming in the current session has ended. */
async function waitForReplyEnd(): Promise<void> {
  await page.waitForFunction(() => {
    const stop = document.querySelector('[data-testid="stop"]') as HTMLElement
    const input = document.querySelector('[data-testid="message-input"]') as HTMLTextAreaElement
    return stop.hidden && !input.disabled && document.querySelector('.message.agent.streaming') === null
  })
}

async function newSession(): Promise<string> {
  const before = await currentSessionId()
  await page.getByTestId('new-session').click()
  await page.waitForFunction((previous) => {
    const id = decodeURIComponent(location.hash.slice(1))
    return id !== '' && id !== previous
  }, before)
  await expect.poll(() => page.getByTestId('state-badge').textContent()).toBe('created')
  return currentSessionId()
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(chromiumMissingMessage())
  workspace = await mkdtemp(join(tmpdir(), 'agentx-playground-e2e-'))
  await mkdir(OUTPUT_DIR, { recursive: true })
  playground = await startServer()
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] })
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  await page.goto(playground.url)
  await page.waitForSelector('body[data-ready="true"]')
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await playground?.close()
  if (workspace !== undefined) await rm(workspace, { recursive: true, force: true })
})

describe('playground in a real browser', () => {
  it('labels the offline demo provider clearly', async () => {
    const option = page.getByTestId('provider-select').locator('option[value="demo"]')
    expect(await option.textContent()).toBe('Demo (offline)')
    expect(await page.getByTestId('provider-note').textContent()).toContain('offline demo')
    expect(await page.getByTestId('storage-info').textContent()).toContain('sqlite')
  })

  it('creates a session and shows the reply streaming in token by token', async () => {
    await page.locator('.options summary').click()
    await page.getByTestId('system-prompt').fill('Answer like a pirate.')
    const id = await newSession()
    expect((await playground.persister.getSession(id))?.systemPrompt).toBe('Answer like a pirate.')
    expect(await page.getByTestId('session-system-prompt').textContent()).toContain('Answer like a pirate.')
    await page.getByTestId('system-prompt').fill('')
    await send('hello')
    // While the reply streams: some text is visible, the Stop button replaces Send, the badge says active.
    const streamingText = page.locator('.message.agent.streaming [data-testid="agent-text"]')
    await streamingText.waitFor()
    await page.waitForFunction(() => {
      const text = document.querySelector('.message.agent.streaming [data-testid="agent-text"]')
      return text !== null && (text.textContent ?? '').length > 0
    })
    const partial = (await streamingText.textContent()) ?? ''
    expect(await page.getByTestId('stop').isVisible()).toBe(true)
    expect(await page.getByTestId('state-badge').textContent()).toBe('active')
    await waitForReplyEnd()
    const final = (await page.getByTestId('agent-text').last().textContent()) ?? ''
    expect(final).toContain('offline demo provider')
    expect(partial.length).toBeGreaterThan(0)
    expect(partial.length).toBeLessThan(final.length)
    expect(await page.getByTestId('state-badge').textContent()).toBe('idle')
    const stored = await playground.persister.getMessages(id)
    expect(stored.map((message) => message.type)).toEqual(['user', 'agent'])
    // The list shows the new summary, the model and token usage.
    const item = page.locator(`[data-testid="session-item"][data-id="${id}"]`)
    await expect.poll(() => item.getByTestId('session-summary').textContent()).toBe('hello')
    expect(await item.textContent()).toContain('agentx-demo-1')
    expect(await item.textContent()).toMatch(/\d+ tok/)
  })

  it('shows a tool call with its result', async () => {
    await send('What is 12 * (3 + 4)?')
    await waitForReplyEnd()
    const card = page.getByTestId('tool-card').last()
    expect(await card.locator('.tool-name').textContent()).toBe('calculator')
    expect(await card.getByTestId('tool-result').textContent()).toContain('84')
    expect(await page.getByTestId('agent-text').last().textContent()).toContain('= 84')
  })

  it('shows thinking folded away, and unfolds it on click', async () => {
    await send('Why is the sky blue? Think about it.')
    await waitForReplyEnd()
    const thinking = page.getByTestId('thinking').last()
    expect(await thinking.getAttribute('open')).toBeNull()
    await thinking.locator('summary').click()
    expect(await thinking.getAttribute('open')).not.toBeNull()
    expect(await thinking.locator('.thinking-text').textContent()).toContain('offline demo')
  })

  it('renders model output as text, never as HTML', async () => {
    await send('<img src=x onerror="window.__pwned = 1"><b>bold?</b>')
    await waitForReplyEnd()
    expect(await page.getByTestId('conversation').locator('img, b').count()).toBe(0)
    expect(await page.getByTestId('agent-text').last().textContent()).toContain('<img src=x')
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()

    await send('see [docs](https://example.com/docs) and [bad](javascript:alert(1))')
    await waitForReplyEnd()
    const links = page.getByTestId('agent-text').last().locator('a')
    expect(await links.count()).toBe(1)
    expect(await links.first().getAttribute('href')).toBe('https://example.com/docs')
    expect(await links.first().getAttribute('rel')).toContain('noopener')
    expect(await page.getByTestId('agent-text').last().textContent()).toContain('[bad](javascript:alert(1))')
  })

  it('keeps hostile Markdown inert: no script, event handler, javascript: link, style or image gets through', async () => {
    const payloads = [
      '<script>window.__pwned = "script"</script>',
      'inline <script>window.__pwned = "inline"</script> and <img src=x onerror="window.__pwned = \'img\'">',
      '<div onclick="window.__pwned = 1" style="position:fixed">raw block html</div>',
      '[plain](javascript:window.__pwned=1) [upper](JAVASCRIPT:window.__pwned=1) [tab](java\tscript:alert(1))',
      '[entity](&#106;avascript:window.__pwned=1) [spaces]( javascript:alert(1) ) [vb](vbscript:msgbox(1))',
      '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) <javascript:alert(1)>',
      '[ref link][evil]\n\n[evil]: javascript:window.__pwned=1',
      '![image](javascript:alert(1)) ![remote](https://example.com/tracker.png "t")',
      '[title](https://example.com "\\" onmouseover=\\"window.__pwned=1")',
      '<a href="javascript:alert(1)">raw link</a> <svg onload="window.__pwned=1"></svg> <iframe src="https://example.com"></iframe>',
      '| a | <b onmouseover="x()">b</b> |\n| --- | --- |\n| <img src=x onerror=alert(1)> | `<script>` |',
      '```html\n<script>window.__pwned = "code"</script>\n<img src=x onerror="window.__pwned=1">\n```',
      '```"><img src=x onerror="window.__pwned=1">\ncode with a hostile info string\n```',
      '```js onload="x"\nconst a = "</code></pre><img src=x onerror=window.__pwned=1>"\n```',
    ]
    const report = (await page.evaluate(`(async (payloads) => {
      const { renderMarkdown } = await import('/markdown.js')
      const host = document.createElement('div')
      host.id = 'xss-host'
      document.body.append(host)
      for (const payload of payloads) host.append(renderMarkdown(payload))
      // Let anything that would load or fire have its chance.
      await new Promise((resolve) => setTimeout(resolve, 300))
      for (const node of host.querySelectorAll('*')) node.dispatchEvent(new MouseEvent('mouseover'))
      const elements = [...host.querySelectorAll('*')]
      const result = {
        pwned: window.__pwned ?? null,
        tags: [...new Set(elements.map((node) => node.tagName.toLowerCase()))].sort(),
        handlers: elements.flatMap((node) => [...node.attributes].map((attribute) => attribute.name)).filter((name) => name.startsWith('on') || name === 'style' || name === 'src'),
        hrefs: [...host.querySelectorAll('[href]')].map((node) => node.getAttribute('href')),
        text: host.textContent,
      }
      host.remove()
      return result
    })(${JSON.stringify(payloads)})`)) as {
      pwned: unknown
      tags: string[]
      handlers: string[]
      hrefs: string[]
      text: string
    }
    expect(report.pwned).toBeNull()
    expect(report.handlers).toEqual([])
    for (const tag of report.tags)
      expect([
        'a',
        'blockquote',
        'br',
        'button',
        'code',
        'div',
        'em',
        'li',
        'ol',
        'p',
        'pre',
        'span',
        'strong',
        'table',
        'tbody',
        'td',
        'th',
        'thead',
        'tr',
        'ul',
      ]).toContain(tag)
    for (const href of report.hrefs) expect(href).toMatch(/^(https?:|mailto:)/)
    expect(report.hrefs).toContain('https://example.com/tracker.png')
    // The markup is shown as text, so the reader sees what the model wrote.
    expect(report.text).toContain('<script>window.__pwned = "script"</script>')
    expect(report.text).toContain('<img src=x onerror="window.__pwned = \'img\'">')
    expect(report.text).toContain('</code></pre><img src=x onerror=window.__pwned=1>')
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined()
  })

  it('stops a streaming reply with the Stop button and keeps the partial reply', async () => {
    const id = await newSession()
    await send('tell me a long story')
    await page.waitForFunction(() => {
      const text = document.querySelector('.message.agent.streaming [data-testid="agent-text"]')
      return text !== null && (text.textContent ?? '').length > 20
    })
    await page.getByTestId('stop').click()
    await page.getByTestId('incomplete-tag').waitFor()
    expect(await page.getByTestId('incomplete-tag').textContent()).toContain('stopped')
    await expect.poll(() => page.getByTestId('state-badge').textContent()).toBe('aborted')
    await waitForReplyEnd()
    const stored = await playground.persister.getMessages(id)
    expect(stored[1]).toMatchObject({ type: 'agent', incomplete: true, stopReason: 'aborted' })
    expect(textOf(stored[1]!.content).length).toBeLessThan(400)
  })

  it('shows an error with its kind and retries it', async () => {
    await newSession()
    await send('/error')
    await page.getByTestId('error-banner').waitFor()
    expect(await page.getByTestId('error-kind').textContent()).toBe('rate_limit')
    expect(await page.getByTestId('error-message').textContent()).toContain('rate limited')
    await expect.poll(() => page.getByTestId('state-badge').textContent()).toBe('error')
    await page.getByTestId('retry').click()
    await waitForReplyEnd()
    await expect.poll(() => page.getByTestId('state-badge').textContent()).toBe('idle')
    expect(await page.getByTestId('error-banner').isHidden()).toBe(true)
  })

  it('deletes a session only after confirmation', async () => {
    const id = await newSession()
    await send('delete me soon')
    await waitForReplyEnd()
    const item = page.locator(`[data-testid="session-item"][data-id="${id}"]`)
    await page.getByTestId('delete-session').click()
    expect(await page.getByTestId('confirm-dialog').isVisible()).toBe(true)
    await page.getByTestId('confirm-cancel').click()
    expect(await item.count()).toBe(1)
    expect(await playground.persister.getSession(id)).not.toBeNull()

    await item.hover()
    await item.getByTestId('session-delete').click()
    await page.getByTestId('confirm-delete').click()
    await item.waitFor({ state: 'detached' })
    expect(await playground.persister.getSession(id)).toBeNull()
    expect(await playground.persister.getMessages(id)).toEqual([])
  })

  it('shows every session and message again after the server restarts', async () => {
    const before = await page.getByTestId('session-summary').allTextContents()
    expect(before).toContain('hello')
    await playground.close()
    playground = await startServer()
    await page.goto(playground.url)
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.getByTestId('session-summary').allTextContents()).toEqual(before)

    await page
      .locator('[data-testid="session-item"]')
      .filter({ hasText: 'hello' })
      .locator('.session-open')
      .click()
    await expect.poll(() => page.getByTestId('session-title').textContent()).toBe('hello')
    await expect.poll(() => page.getByTestId('user-message').count()).toBe(5)
    expect(await page.getByTestId('tool-result').first().textContent()).toContain('84')
    expect(await page.getByTestId('thinking').count()).toBe(1)
    await page.screenshot({ path: join(OUTPUT_DIR, 'playground.png'), fullPage: true })
    expect(existsSync(join(OUTPUT_DIR, 'playground.png'))).toBe(true)
  })

  it('labels a reply cut by a server stop as such, not as stopped by the user, and offers to regenerate it', async () => {
    const id = await newSession()
    await send('tell me a long story')
    await page.waitForFunction(() => {
      const text = document.querySelector('.message.agent.streaming [data-testid="agent-text"]')
      return text !== null && (text.textContent ?? '').length > 20
    })
    await playground.close()
    playground = await startServer()
    await page.goto(`${playground.url}/#${encodeURIComponent(id)}`)
    await page.waitForSelector('body[data-ready="true"]')
    await page.getByTestId('incomplete-tag').waitFor()
    expect(await page.getByTestId('incomplete-tag').textContent()).toContain('the server stopped')
    expect(await page.getByTestId('notice-text').textContent()).toContain(
      'The server stopped while this reply was streaming',
    )
    await page.getByTestId('regenerate').click()
    await waitForReplyEnd()
    expect(
      (await playground.persister.getMessages(id)).map((message) => [message.type, message.incomplete]),
    ).toEqual([
      ['user', undefined],
      ['agent', true],
      ['agent', undefined],
    ])
  })

  it('loads older sessions page by page', async () => {
    const existing = await playground.persister.listSessions({})
    for (let index = 0; index < 50; index++) {
      const created = await fetch(`${playground.url}/api/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ provider: 'demo' }),
      })
      expect(created.status).toBe(201)
    }
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.getByTestId('session-item').count()).toBe(50)
    await page.getByTestId('load-more').click()
    await expect.poll(() => page.getByTestId('session-item').count()).toBe(50 + existing.length)
    expect(await page.getByTestId('load-more').count()).toBe(0)
  })
})
