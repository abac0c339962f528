/// <reference lib="dom" />
// The defects of issue #22 and the capabilities of the tour, driven in a real Chromium: every
// test here failed (or could not run) before the fix it covers.
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AnyMessage, ContentBlock } from '@agentx/core'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Playground, startPlayground } from '../src/start-playground.js'
import { CHROMIUM_ARGS, CHROMIUM_PATH, chromiumMissingMessage } from './ensure-chromium.js'

const OUTPUT_DIR = fileURLToPath(new URL('../test-output/', import.meta.url))
const DESKTOP = { width: 1280, height: 820 }

let workspace: string
let playground: Playground
let browser: Browser
let context: BrowserContext

function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

async function openPage(hash = '', viewport = DESKTOP, inContext = context): Promise<Page> {
  const page = await inContext.newPage()
  await page.setViewportSize(viewport)
  await page.goto(`${playground.url}/${hash}`)
  await page.waitForSelector('body[data-ready="true"]')
  return page
}

function currentId(page: Page): string {
  return decodeURIComponent(new URL(page.url()).hash.slice(1))
}

async function newSession(page: Page): Promise<string> {
  const before = currentId(page)
  if (await page.getByTestId('open-sidebar').isVisible()) await page.getByTestId('open-sidebar').click()
  if (!(await page.getByTestId('new-session').isVisible()))
    await page.getByTestId('new-session-toggle').click()
  await page.getByTestId('new-session').click()
  await page.waitForFunction((previous) => {
    const id = decodeURIComponent(location.hash.slice(1))
    return id !== '' && id !== previous
  }, before)
  await expect.poll(() => page.getByTestId('state-badge').textContent()).toBe('created')
  return currentId(page)
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('message-input').fill(text)
  await page.getByTestId('message-input').press('Enter')
}

/** Waits until no reply runs in the open session. */
async function waitForReplyEnd(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const stop = document.querySelector('[data-testid="stop"]') as HTMLElement
    const badge = document.querySelector('[data-testid="state-badge"]') as HTMLElement
    return (
      stop.hidden &&
      badge.dataset.state !== 'active' &&
      document.querySelector('.message.agent.streaming') === null
    )
  })
}

async function createViaApi(body: Record<string, unknown> = { provider: 'demo' }): Promise<string> {
  const response = await fetch(`${playground.url}/api/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(response.status).toBe(201)
  return ((await response.json()) as { session: { id: string } }).session.id
}

async function sendViaApi(id: string, content: string): Promise<void> {
  const response = await fetch(`${playground.url}/api/sessions/${encodeURIComponent(id)}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content }),
  })
  await response.text()
}

async function streamedLength(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      document.querySelector('.message.agent.streaming [data-testid="agent-text"]')?.textContent?.length ?? 0,
  )
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(chromiumMissingMessage())
  workspace = await mkdtemp(join(tmpdir(), 'agentx-playground-tour-'))
  await mkdir(OUTPUT_DIR, { recursive: true })
  playground = await startPlayground({
    env: {},
    workspace,
    port: 0,
    demoDelayMs: 20,
    retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 5 },
  })
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] })
  context = await browser.newContext()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await playground?.close()
  if (workspace !== undefined) await rm(workspace, { recursive: true, force: true })
})

describe('defects found in a real browser', () => {
  it('fits a 375 px phone: no sideways scroll, Send on screen, a usable session list in a drawer', async () => {
    const page = await openPage('', { width: 375, height: 740 })
    await newSession(page)
    await send(page, 'hello from a phone')
    await waitForReplyEnd(page)
    const layout = await page.evaluate(() => {
      const send = document.querySelector('[data-testid="send"]')!.getBoundingClientRect()
      const input = document.querySelector('[data-testid="message-input"]')!.getBoundingClientRect()
      return {
        pageWidth: document.documentElement.scrollWidth,
        bodyWidth: document.body.scrollWidth,
        send: { left: send.left, right: send.right, bottom: send.bottom },
        inputWidth: input.width,
      }
    })
    expect(layout.pageWidth).toBeLessThanOrEqual(375)
    expect(layout.bodyWidth).toBeLessThanOrEqual(375)
    expect(layout.send.left).toBeGreaterThanOrEqual(0)
    expect(layout.send.right).toBeLessThanOrEqual(375)
    expect(layout.send.bottom).toBeLessThanOrEqual(740)
    expect(layout.inputWidth).toBeGreaterThan(150)
    await page.screenshot({ path: join(OUTPUT_DIR, 'mobile-375.png') })

    await page.getByTestId('open-sidebar').click()
    await page.getByTestId('session-list').waitFor({ state: 'visible' })
    // The drawer slides in: wait until it is all the way in.
    await page.waitForFunction(
      () => document.querySelector('[data-testid="sidebar"]')!.getBoundingClientRect().left === 0,
    )
    const drawer = await page.evaluate(() => {
      const list = document.querySelector('[data-testid="session-list"]')!.getBoundingClientRect()
      const storage = document.querySelector('[data-testid="storage-info"]') as HTMLElement
      return {
        listHeight: list.height,
        storageOverflows: storage.scrollWidth > storage.clientWidth,
        pageWidth: document.documentElement.scrollWidth,
      }
    })
    expect(drawer.listHeight).toBeGreaterThan(200)
    expect(drawer.storageOverflows).toBe(false)
    expect(drawer.pageWidth).toBeLessThanOrEqual(375)
    await page.screenshot({ path: join(OUTPUT_DIR, 'mobile-375-sessions.png') })
    await page.getByTestId('session-item').first().locator('.session-open').click()
    await expect
      .poll(() => page.getByTestId('sidebar').evaluate((node) => getComputedStyle(node).visibility))
      .toBe('hidden')
    await page.close()
  })

  it('shows the error of a failed turn again after a reload, with Retry for a retryable error', async () => {
    const page = await openPage()
    const id = await newSession(page)
    await send(page, '/error')
    await page.getByTestId('error-banner').waitFor()
    await waitForReplyEnd(page)
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    expect(currentId(page)).toBe(id)
    await page.getByTestId('error-banner').waitFor()
    expect(await page.getByTestId('error-kind').textContent()).toBe('rate_limit')
    expect(await page.getByTestId('error-message').textContent()).toContain('rate limited')
    expect(await page.getByTestId('retry').isVisible()).toBe(true)
    // Retry uses session.retry(): the user message is stored once.
    await page.getByTestId('retry').click()
    await waitForReplyEnd(page)
    await expect.poll(() => page.getByTestId('state-badge').textContent()).toBe('idle')
    expect(await page.getByTestId('error-banner').isHidden()).toBe(true)
    expect((await playground.persister.getMessages(id)).map((message) => message.type)).toEqual([
      'user',
      'agent',
    ])
    expect(await page.getByTestId('user-message').count()).toBe(1)
    await page.close()
  })

  it('keeps the text of a refused send in the input, without Retry; no Retry for a non-retryable error', async () => {
    const page = await openPage()
    const id = await newSession(page)
    const tooLong = 'x'.repeat(100_001)
    await page.getByTestId('message-input').fill(tooLong)
    await page.getByTestId('send').click()
    await page.getByTestId('error-banner').waitFor()
    expect(await page.getByTestId('error-kind').textContent()).toBe('VALIDATION')
    expect(await page.getByTestId('retry').isHidden()).toBe(true)
    expect(await page.getByTestId('message-input').inputValue()).toBe(tooLong)
    expect(await page.getByTestId('user-message').count()).toBe(0)
    expect(await playground.persister.getMessages(id)).toEqual([])

    await send(page, '/error auth')
    await page.getByTestId('error-banner').waitFor()
    await expect.poll(() => page.getByTestId('error-kind').textContent()).toBe('authentication')
    expect(await page.getByTestId('retry').isHidden()).toBe(true)
    // The accepted message left the input.
    expect(await page.getByTestId('message-input').inputValue()).toBe('')
    await page.close()
  })

  it('opens /#id for a session beyond the first 50, and survives a malformed hash', async () => {
    const old = await createViaApi()
    await sendViaApi(old, 'an old conversation')
    for (let index = 0; index < 52; index++) await createViaApi()
    const page = await openPage(`#${encodeURIComponent(old)}`)
    expect(await page.getByTestId('session-item').count()).toBe(50)
    expect(currentId(page)).toBe(old)
    await expect.poll(() => page.getByTestId('session-title').textContent()).toBe('an old conversation')
    expect(await page.getByTestId('user-message').first().locator('.bubble').textContent()).toBe(
      'an old conversation',
    )
    expect(await page.getByTestId('message-input').isEnabled()).toBe(true)

    const errors: string[] = []
    const broken = await context.newPage()
    broken.on('pageerror', (error) => errors.push(error.message))
    await broken.goto(`${playground.url}/#%E0%A4%A`)
    await broken.waitForSelector('body[data-ready="true"]')
    expect(errors).toEqual([])
    expect(await broken.getByTestId('error-banner').isHidden()).toBe(true)
    const newest = (await playground.persister.listSessions({ limit: 1 }))[0]!.id
    expect(currentId(broken)).toBe(newest)
    await broken.close()

    const missing = await openPage('#no-such-session')
    expect(await missing.getByTestId('notice-text').textContent()).toContain(
      'There is no session no-such-session',
    )
    await missing.close()
    await page.close()
  })

  it('removes a session deleted in another tab', async () => {
    const id = await createViaApi()
    await sendViaApi(id, 'delete me elsewhere')
    // Another browser (its own context: no BroadcastChannel between them) and a tab of this one.
    const elsewhere = await browser.newContext()
    const watcher = await openPage(`#${encodeURIComponent(id)}`, DESKTOP, elsewhere)
    const sibling = await openPage(`#${encodeURIComponent(id)}`)
    const other = await openPage(`#${encodeURIComponent(id)}`)
    await other.getByTestId('delete-session').click()
    await other.getByTestId('confirm-delete').click()
    for (const tab of [watcher, sibling]) {
      await tab.locator(`[data-testid="session-item"][data-id="${id}"]`).waitFor({ state: 'detached' })
      await expect.poll(() => tab.getByTestId('notice-text').textContent()).toContain('deleted')
      expect(await tab.getByTestId('user-message').count()).toBe(0)
      expect(currentId(tab)).toBe('')
    }
    await elsewhere.close()
    await sibling.close()
    await other.close()
  })

  it('lets a second tab watch a running reply, explains why it cannot send, and stop it', async () => {
    const owner = await openPage()
    const id = await newSession(owner)
    await send(owner, '/long')
    await owner.waitForFunction(
      () => (document.querySelector('.message.agent.streaming')?.textContent?.length ?? 0) > 20,
    )
    const second = await openPage(`#${encodeURIComponent(id)}`)
    // The reply streams here too, from its first word.
    await second.waitForFunction(
      () => (document.querySelector('.message.agent.streaming')?.textContent?.length ?? 0) > 0,
    )
    const first = await streamedLength(second)
    await expect.poll(() => streamedLength(second)).toBeGreaterThan(first)
    expect(await second.getByTestId('user-message').count()).toBe(1)
    expect(await second.getByTestId('composer-note').textContent()).toContain(
      'A reply is running for this session',
    )
    expect(await second.getByTestId('send').isHidden()).toBe(true)
    await second.screenshot({ path: join(OUTPUT_DIR, 'second-tab-watching.png') })
    await second.getByTestId('stop').click()
    await expect.poll(() => owner.getByTestId('state-badge').textContent()).toBe('aborted')
    await expect.poll(() => second.getByTestId('state-badge').textContent()).toBe('aborted')
    await owner.getByTestId('incomplete-tag').waitFor()
    expect(await owner.getByTestId('incomplete-tag').textContent()).toContain('stopped')
    await expect.poll(() => second.getByTestId('composer-note').isHidden()).toBe(true)
    await owner.close()
    await second.close()
  })

  it('shows the running send of another tab, its question included, when this tab’s send is refused', async () => {
    const owner = await openPage()
    const id = await newSession(owner)
    const second = await openPage(`#${encodeURIComponent(id)}`)
    // Another tab starts a reply; this one has not noticed yet and sends too: refused (busy).
    void fetch(`${playground.url}/api/sessions/${encodeURIComponent(id)}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: '/long' }),
    }).then((response) => response.text())
    await expect
      .poll(async () => {
        const response = await fetch(`${playground.url}/api/sessions/${encodeURIComponent(id)}`)
        return ((await response.json()) as { running?: unknown }).running !== undefined
      })
      .toBe(true)
    await send(second, 'tab two says hi')
    await second.waitForFunction(
      () => (document.querySelector('.message.agent.streaming')?.textContent?.length ?? 0) > 0,
    )
    // Before: the reply showed without the question it answers (until a reload).
    await expect.poll(() => second.getByTestId('user-message').count()).toBe(1)
    expect(await second.getByTestId('user-message').textContent()).toContain('/long')
    expect(await second.getByTestId('message-input').inputValue()).toBe('tab two says hi')
    await second.getByTestId('stop').click()
    await waitForReplyEnd(second)
    await owner.close()
    await second.close()
  })

  it('keeps a reply running through a reload and shows it continuing', async () => {
    const page = await openPage()
    const id = await newSession(page)
    await send(page, '/long')
    await page.waitForFunction(
      () => (document.querySelector('.message.agent.streaming')?.textContent?.length ?? 0) > 20,
    )
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    expect(currentId(page)).toBe(id)
    await page.waitForFunction(
      () => (document.querySelector('.message.agent.streaming')?.textContent?.length ?? 0) > 0,
    )
    const before = await streamedLength(page)
    await expect.poll(() => streamedLength(page)).toBeGreaterThan(before)
    await waitForReplyEnd(page)
    const stored = await playground.persister.getMessages(id)
    expect(stored.map((message) => [message.type, message.incomplete])).toEqual([
      ['user', undefined],
      ['agent', undefined],
    ])
    expect(await page.getByTestId('agent-text').last().textContent()).toContain(
      textOf(stored[1]!.content).slice(-40),
    )
    expect(await page.getByTestId('agent-message').count()).toBe(1)
    expect(await page.getByTestId('state-badge').textContent()).toBe('idle')
    await page.close()
  })

  it('lets another session send while one is running', async () => {
    const page = await openPage()
    const running = await newSession(page)
    await send(page, '/long')
    await page.waitForFunction(
      () => (document.querySelector('.message.agent.streaming')?.textContent?.length ?? 0) > 10,
    )
    const other = await newSession(page)
    expect(await page.getByTestId('send').isHidden()).toBe(false)
    await send(page, 'hello')
    await waitForReplyEnd(page)
    expect((await playground.persister.getMessages(other)).map((message) => message.type)).toEqual([
      'user',
      'agent',
    ])
    await fetch(`${playground.url}/api/sessions/${running}/abort`, { method: 'POST' })
    await page.close()
  })

  it('renders a 160 KB line of unclosed links quickly (no quadratic pattern), and keeps the conversation out of aria-live', async () => {
    const page = await openPage()
    // A string, so the test runner does not rewrite the browser's dynamic import.
    const elapsed = (await page.evaluate(`(async () => {
      const { renderMarkdown } = await import('/markdown.js')
      const text = '[a]('.repeat(40000)
      const started = performance.now()
      const fragment = renderMarkdown(text)
      const took = performance.now() - started
      if (fragment.textContent.length !== text.length) throw new Error('text was lost')
      return took
    })()`)) as number
    expect(elapsed).toBeLessThan(500)
    expect(await page.getByTestId('conversation').getAttribute('aria-live')).toBeNull()
    expect(await page.getByTestId('announcer').getAttribute('aria-live')).toBe('polite')
    await newSession(page)
    await send(page, 'hello')
    await waitForReplyEnd(page)
    await expect.poll(() => page.getByTestId('announcer').textContent()).toBe('Reply finished.')
    await page.close()
  })
})

describe('every capability, toured with the offline demo provider', () => {
  let page: Page

  beforeAll(async () => {
    page = await openPage()
  })

  afterAll(async () => {
    await page.close()
  })

  it('asks for approval: Deny with a reason, then Approve with an edited input', async () => {
    const id = await newSession(page)
    await send(page, '/approve')
    const card = page.getByTestId('pending-card')
    await card.waitFor()
    expect(await card.getAttribute('data-kind')).toBe('approval')
    expect(await card.locator('.tool-name').textContent()).toBe('deploy_service')
    expect(await page.getByTestId('state-badge').textContent()).toBe('waiting input')
    expect(await page.getByTestId('composer-note').textContent()).toContain('waits for your answer')
    await page.screenshot({ path: join(OUTPUT_DIR, 'approval.png') })
    await card.getByTestId('pending-reason').fill('not on a Friday')
    await card.getByTestId('deny').click()
    await waitForReplyEnd(page)
    await expect.poll(() => page.getByTestId('agent-text').last().textContent()).toContain('not on a Friday')
    expect(await page.getByTestId('tool-card').last().getAttribute('class')).toContain('failed')

    await send(page, '/approve')
    await page.getByTestId('pending-card').waitFor()
    await page.getByTestId('pending-card').locator('.pending-edit summary').click()
    await page.getByTestId('pending-input-editor').fill('{ "service": "api", "environment": "production" }')
    await page.getByTestId('approve').click()
    await waitForReplyEnd(page)
    await expect
      .poll(() => page.getByTestId('agent-text').last().textContent())
      .toContain('Deployed api to production')
    const results = (await playground.persister.getMessages(id)).filter((message) => message.type === 'tool')
    expect(JSON.stringify(results.at(-1)?.content)).toContain('\\"service\\":\\"api\\"')
  })

  it('asks the user a question through a client tool, also after a reload', async () => {
    await newSession(page)
    await send(page, '/ask')
    await page.getByTestId('pending-card').waitFor()
    // The answer field has the focus: typing and Enter answer (before, later events moved the
    // panel and the focus fell back to the page).
    await waitForReplyEnd(page)
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
      .toBe('pending-answer')
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    const card = page.getByTestId('pending-card')
    await card.waitFor()
    expect(await card.getAttribute('data-kind')).toBe('client')
    expect(await card.locator('.pending-question').textContent()).toContain('Which city')
    await card.getByTestId('pending-answer').fill('Lisbon')
    await card.getByTestId('pending-submit').click()
    await waitForReplyEnd(page)
    await expect
      .poll(() => page.getByTestId('agent-text').last().textContent())
      .toContain('You answered “Lisbon”')
  })

  it('shows a handoff between profiles inline, and a profile picked per send', async () => {
    await newSession(page)
    await send(page, '/handoff')
    await waitForReplyEnd(page)
    await page.getByTestId('handoff-marker').waitFor()
    expect(await page.getByTestId('handoff-marker').textContent()).toBe('default → billing')
    expect(await page.getByTestId('agent-name').last().textContent()).toBe('billing')
    expect(await page.getByTestId('session-meta').textContent()).toContain('agent: billing')
    // The options of a send: back to the default profile.
    await page.getByTestId('options-toggle').click()
    await page.getByTestId('agent-select').selectOption('default')
    await send(page, 'hello')
    await waitForReplyEnd(page)
    await expect.poll(() => page.getByTestId('handoff-marker').count()).toBe(2)
    expect(await page.getByTestId('handoff-marker').last().textContent()).toBe('billing → default')
    await page.getByTestId('agent-select').selectOption('')
    await page.getByTestId('options-toggle').click()
    // After a reload the markers come from the stored agent names.
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.getByTestId('handoff-marker').allTextContents()).toEqual([
      'default → billing',
      'billing → default',
    ])
  })

  it('shows a sub-agent working in a child session, which opens read only', async () => {
    const id = await newSession(page)
    await send(page, '/delegate')
    const panel = page.getByTestId('subagent-panel')
    await panel.waitFor()
    await expect.poll(() => panel.locator('.subagent-text').textContent()).toContain('Findings on')
    await waitForReplyEnd(page)
    expect(await page.getByTestId('agent-text').last().textContent()).toContain(
      'The researcher sub-agent reports',
    )
    await page.screenshot({ path: join(OUTPUT_DIR, 'subagent.png') })
    await panel.getByTestId('child-link').click()
    await page.getByTestId('child-note').waitFor()
    expect(currentId(page).startsWith(`${id}/`)).toBe(true)
    expect(await page.getByTestId('message-input').isDisabled()).toBe(true)
    expect(await page.getByTestId('agent-text').first().textContent()).toContain('Findings on')
    await page.getByTestId('parent-link').click()
    await expect.poll(() => currentId(page)).toBe(id)
    await page.getByTestId('subagent-panel').waitFor()
  })

  it('traces each send: steps, tools, time to first token and tokens', async () => {
    await newSession(page)
    await send(page, 'What is 12 * (3 + 4)?')
    await waitForReplyEnd(page)
    const trace = page.getByTestId('trace').last()
    await expect
      .poll(() => trace.locator('summary').textContent())
      .toMatch(/^Trace · 2 steps · 1 tool · .*first token .* tokens$/)
    await trace.locator('summary').click()
    const steps = await trace.getByTestId('trace-step').allTextContents()
    expect(steps).toHaveLength(2)
    expect(steps[0]).toMatch(
      /^step 1 · default · agentx-demo-1 · \d+ ms · first token \d+ ms · \d+ in \/ \d+ out · tool_use$/,
    )
    expect(steps[1]).toContain('end_turn')
    expect(await trace.getByTestId('trace-tool').textContent()).toMatch(/^calculator · \d+ ms$/)
    await page.screenshot({ path: join(OUTPUT_DIR, 'trace.png') })
  })

  it('shows structured output, a full context, and regenerates a stopped reply with retry()', async () => {
    const id = await newSession(page)
    await send(page, '/json')
    await waitForReplyEnd(page)
    expect(await page.getByTestId('structured-output').count()).toBe(1)
    await send(page, '/compact')
    await waitForReplyEnd(page)
    expect(await page.getByTestId('state-badge').textContent()).toBe('idle')
    await send(page, '/long')
    await page.waitForFunction(
      () => (document.querySelector('.message.agent.streaming')?.textContent?.length ?? 0) > 20,
    )
    await page.getByTestId('stop').click()
    await page.getByTestId('regenerate').waitFor()
    await page.getByTestId('regenerate').click()
    await waitForReplyEnd(page)
    const stored = await playground.persister.getMessages(id)
    expect(stored.slice(-3).map((message) => [message.type, message.incomplete])).toEqual([
      ['user', undefined],
      ['agent', true],
      ['agent', undefined],
    ])
    expect(stored.filter((message) => message.type === 'user')).toHaveLength(3)
  })

  it('asks for structured output with a schema: /json uses the example, any schema can be typed, a mismatch is OUTPUT_INVALID', async () => {
    const id = await newSession(page)
    await send(page, '/json')
    await waitForReplyEnd(page)
    const panel = page.getByTestId('structured-output')
    await panel.waitFor()
    expect(await panel.textContent()).toContain('weather_report')
    expect(await panel.locator('dd[data-field="city"]').textContent()).toBe('Paris')
    expect(await panel.locator('dd[data-field="advice"]').textContent()).toBe('wear sunglasses, drink water')
    // Drawn again (a reply started elsewhere is picked up and the conversation redrawn), the reply keeps it.
    await sendViaApi(id, 'hello from elsewhere')
    await expect
      .poll(() => page.getByTestId('user-message').locator('.bubble').allTextContents(), { timeout: 15_000 })
      .toContain('hello from elsewhere')
    await waitForReplyEnd(page)
    expect(await page.getByTestId('structured-output').count()).toBe(1)
    expect(await panel.locator('dd[data-field="city"]').textContent()).toBe('Paris')
    // The reply itself is the JSON, shown as a JSON code block.
    expect(
      JSON.parse((await page.getByTestId('agent-message').first().locator('pre code').textContent()) ?? ''),
    ).toEqual({
      city: 'Paris',
      temperatureC: 21,
      conditions: 'sunny',
      advice: ['wear sunglasses', 'drink water'],
    })

    // A schema of one's own, in the ⚙ options.
    await page.getByTestId('options-toggle').click()
    await page.getByTestId('send-output-schema').fill('{ "type": "object"')
    await send(page, 'rate my trip')
    expect(await page.getByTestId('error-message').textContent()).toContain('not valid JSON')
    expect(await page.getByTestId('message-input').inputValue()).toBe('rate my trip')
    await page.getByTestId('send-output-schema').fill(
      JSON.stringify({
        type: 'object',
        properties: {
          title: { type: 'string', examples: ['A day in Lyon'] },
          stars: { type: 'integer', minimum: 4, maximum: 5 },
        },
        required: ['title', 'stars'],
      }),
    )
    await send(page, 'rate my trip')
    await waitForReplyEnd(page)
    await expect.poll(() => page.getByTestId('structured-output').count()).toBe(2)
    const custom = page.getByTestId('structured-output').last()
    expect(await custom.locator('dd[data-field="title"]').textContent()).toBe('A day in Lyon')
    expect(await custom.locator('dd[data-field="stars"]').textContent()).toBe('4')
    await page.screenshot({ path: join(OUTPUT_DIR, 'structured-output.png') })

    // The example schema, and a reply that does not match it.
    await page.getByTestId('output-example').click()
    expect(JSON.parse(await page.getByTestId('send-output-schema').inputValue()).required).toEqual([
      'city',
      'temperatureC',
      'conditions',
      'advice',
    ])
    await send(page, '/json broken')
    await waitForReplyEnd(page)
    expect(await page.getByTestId('error-kind').textContent()).toBe('OUTPUT_INVALID')
    expect(await page.getByTestId('error-message').textContent()).toContain('temperatureC: required')
    expect(await page.getByTestId('retry').isVisible()).toBe(false)
    expect(await page.getByTestId('state-badge').textContent()).toBe('error')
    expect(await page.getByTestId('structured-output').count()).toBe(2)
    const stored = await playground.persister.getMessages(id)
    expect(stored.at(-1)?.type).toBe('agent')
    await page.getByTestId('send-output-schema').fill('')
    await page.getByTestId('options-toggle').click()
    // After a reload the stored JSON replies are still marked as such, and the error explained.
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.getByTestId('json-output').count()).toBe(3)
    expect(await page.getByTestId('error-kind').textContent()).toBe('OUTPUT_INVALID')
  }, 60_000)

  it('renders Markdown while it streams: finished blocks once, then tables, highlighted code and copy buttons', async () => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: playground.url })
    await newSession(page)
    await send(page, '/markdown')
    // While streaming: the heading, once finished, is rendered once and kept as the reply grows.
    const stableHeading = '.message.agent.streaming .markdown-stable h4'
    await page.waitForSelector(stableHeading)
    await page.evaluate((selector) => {
      ;(document.querySelector(selector) as HTMLElement & { rendered?: boolean }).rendered = true
    }, stableHeading)
    await page.waitForSelector('.message.agent.streaming .markdown-stable .table-wrapper')
    const midStream = await page.evaluate((selector) => {
      const heading = document.querySelector(selector) as (HTMLElement & { rendered?: boolean }) | null
      const tail = document.querySelector('.message.agent.streaming .markdown-tail')
      return {
        sameHeading: heading?.rendered === true,
        stableBlocks: document.querySelector('.message.agent.streaming .markdown-stable')?.childElementCount,
        tailBlocks: tail?.childElementCount ?? 0,
      }
    }, stableHeading)
    expect(midStream.sameHeading).toBe(true)
    expect(midStream.stableBlocks).toBeGreaterThanOrEqual(4)
    expect(midStream.tailBlocks).toBeLessThanOrEqual(1)
    await waitForReplyEnd(page)

    const reply = page.getByTestId('agent-message').last().getByTestId('agent-text')
    expect(await reply.locator('h4').textContent()).toBe('Markdown, rendered as it streams')
    expect(await reply.locator('table th').allTextContents()).toEqual(['capability', 'where', 'status'])
    expect(await reply.locator('table tbody tr').count()).toBe(3)
    expect(await reply.locator('table th').nth(1).getAttribute('class')).toBe('align-center')
    expect(await reply.locator('table td').nth(2).getAttribute('class')).toBe('align-right')
    expect(await reply.locator('ol li').count()).toBe(2)
    // Numbered from 1, like the source.
    expect(
      await reply
        .locator('ol li')
        .first()
        .evaluate((item) => (item.parentElement as HTMLOListElement).start),
    ).toBe(1)
    expect(await reply.locator('s').textContent()).toBe('strikethrough')
    expect(
      await reply.locator('a').evaluateAll((links) => links.map((link) => link.getAttribute('href'))),
    ).toEqual(['https://example.com/agentx', 'https://example.com/plain'])
    const blocks = reply.getByTestId('code-block')
    expect(await blocks.locator('.code-language').allTextContents()).toEqual(['ts', 'python', 'sh'])
    // Highlighted: keywords, strings and comments are spans of their own.
    const typescript = blocks.nth(0).locator('code')
    expect(await typescript.getAttribute('data-language')).toBe('ts')
    expect(await typescript.locator('.hljs-keyword').first().textContent()).toBe('import')
    expect(await typescript.locator('.hljs-string').first().textContent()).toBe("'@agentx/core'")
    expect(await typescript.locator('.hljs-comment').textContent()).toBe(
      '// resolves when the reply is stored',
    )
    expect(await blocks.nth(1).locator('.hljs-keyword').first().textContent()).toBe('def')
    // The raw HTML and the javascript: link of the reply are text.
    expect(await reply.locator('blockquote').textContent()).toContain('<script>alert("no")</script>')
    expect(await reply.locator('script').count()).toBe(0)

    // Copy puts the code, exactly, on the clipboard.
    await blocks.nth(0).getByTestId('copy-code').click()
    await expect.poll(() => blocks.nth(0).getByTestId('copy-code').textContent()).toBe('Copied')
    const copied = await page.evaluate(() => navigator.clipboard.readText())
    expect(copied).toBe(await typescript.textContent())
    expect(copied.split('\n')[0]).toBe("import { createAgent } from '@agentx/core'")
    expect(copied.endsWith('\n')).toBe(false)
    await blocks.nth(2).getByTestId('copy-code').click()
    await expect
      .poll(() => page.evaluate(() => navigator.clipboard.readText()))
      .toBe('pnpm install && pnpm start')
    await reply.locator('table').scrollIntoViewIfNeeded()
    await page.screenshot({ path: join(OUTPUT_DIR, 'markdown.png') })

    // The stored reply renders the same after a reload.
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    const reloaded = page.getByTestId('agent-message').last()
    expect(await reloaded.getByTestId('code-block').count()).toBe(3)
    expect(await reloaded.locator('table tbody tr').count()).toBe(3)
  }, 60_000)

  it('shows compaction markers with the summary folded', async () => {
    // A conversation as the kernel stores it after a compaction (DESIGN §10.4): a system message
    // with `compaction.throughSeq` and the summary, and the messages before it still there.
    const id = 'compacted-session'
    const now = new Date().toISOString()
    await playground.persister.saveSession({
      id,
      summary: 'a compacted conversation',
      createdAt: now,
      lastActivity: now,
      state: 'idle',
      model: 'agentx-demo-1',
      appName: 'agentx-playground',
      metadata: { provider: 'demo' },
      tokenUsage: { inputTokens: 10, outputTokens: 10, totalTokens: 20 },
    })
    const message = (seq: number, type: AnyMessage['type'], text: string, extra: Partial<AnyMessage> = {}) =>
      playground.persister.saveMessage(id, {
        id: `${id}-${seq}`,
        sessionId: id,
        seq,
        type,
        content: type === 'user' ? text : [{ type: 'text', text }],
        timestamp: now,
        ...extra,
      })
    await message(0, 'user', 'a compacted conversation')
    await message(1, 'agent', 'An early answer.')
    await message(2, 'system', 'Summary: the user asked a first question.', { compaction: { throughSeq: 1 } })
    await message(3, 'user', 'and a later one')
    await message(4, 'agent', 'A later answer.')
    await page.goto(`${playground.url}/#${id}`)
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    const marker = page.getByTestId('compaction-marker')
    await marker.waitFor()
    expect(await marker.locator('summary').textContent()).toBe('Earlier messages summarised (through #1)')
    expect(await marker.getAttribute('open')).toBeNull()
    await marker.locator('summary').click()
    expect(await marker.locator('.compaction-text').textContent()).toContain(
      'the user asked a first question',
    )
    expect(await page.getByTestId('user-message').count()).toBe(2)
  })

  it('searches and filters sessions, and exports one as JSON', async () => {
    const id = await createViaApi()
    await sendViaApi(id, 'a very particular zebra question')
    const failed = await createViaApi()
    await sendViaApi(failed, '/error')
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    await page.getByTestId('session-search').fill('zebra')
    await expect
      .poll(() => page.getByTestId('session-summary').allTextContents())
      .toEqual(['a very particular zebra question'])
    await page.getByTestId('session-search').fill('')
    await page.getByTestId('state-filter').selectOption('error')
    await expect
      .poll(async () => [
        ...new Set(await page.locator('[data-testid="session-item"] .badge').allTextContents()),
      ])
      .toEqual(['error'])
    expect(await page.getByTestId('session-summary').allTextContents()).toContain('/error')
    await page.getByTestId('state-filter').selectOption('')

    await page.goto(`${playground.url}/#${encodeURIComponent(id)}`)
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('export-session').click(),
    ])
    expect(download.suggestedFilename()).toMatch(/^agentx-session-.+\.json$/)
    const exported = await page.evaluate(
      async (path) => (await fetch(path)).json(),
      `/api/sessions/${encodeURIComponent(id)}/export`,
    )
    expect(exported.session.id).toBe(id)
    expect(exported.messages.map((message: AnyMessage) => message.type)).toEqual(['user', 'agent'])
  })

  it('forks from a message: a new session with the messages up to it, which goes its own way', async () => {
    const source = await newSession(page)
    await send(page, 'first question')
    await waitForReplyEnd(page)
    await send(page, 'second question')
    await waitForReplyEnd(page)
    await page.locator('[data-testid="agent-message"][data-seq="1"] [data-testid="fork-here"]').click()
    await page.waitForFunction((previous) => decodeURIComponent(location.hash.slice(1)) !== previous, source)
    const fork = currentId(page)
    await page.getByTestId('fork-note').waitFor()
    expect(await page.getByTestId('fork-note').textContent()).toContain('up to #1')
    await page.screenshot({ path: join(OUTPUT_DIR, 'fork.png') })
    expect(await page.getByTestId('user-message').locator('.bubble').allTextContents()).toEqual([
      'first question',
    ])
    expect(await page.getByTestId('agent-message').count()).toBe(1)
    expect(
      await page.locator(`[data-testid="session-item"][data-id="${fork}"] .tag.fork`).textContent(),
    ).toBe('fork')
    expect((await playground.persister.getSession(fork))?.forkedFrom).toEqual({ sessionId: source, seq: 1 })
    expect((await playground.persister.getMessages(fork)).map((message) => message.seq)).toEqual([0, 1])

    await send(page, 'a different follow-up')
    await expect.poll(async () => (await playground.persister.getMessages(fork)).length).toBe(4)
    await waitForReplyEnd(page)
    expect(await page.getByTestId('user-message').locator('.bubble').allTextContents()).toEqual([
      'first question',
      'a different follow-up',
    ])
    const forked = await playground.persister.getMessages(fork)
    expect(forked.map((message) => message.seq)).toEqual([0, 1, 2, 3])
    expect(forked[2]?.content).toBe('a different follow-up')
    // The original is untouched, one click away.
    const original = await playground.persister.getMessages(source)
    expect(
      original.map((message) => message.content).filter((content) => typeof content === 'string'),
    ).toEqual(['first question', 'second question'])
    await page.getByTestId('fork-source-link').click()
    await page.waitForFunction((id) => decodeURIComponent(location.hash.slice(1)) === id, source)
    await expect
      .poll(() => page.getByTestId('user-message').locator('.bubble').allTextContents())
      .toEqual(['first question', 'second question'])
  }, 60_000)

  it('edits a message and resends it as a fork, leaving the original conversation as it was', async () => {
    const source = await newSession(page)
    await send(page, 'what is the capital of France?')
    await waitForReplyEnd(page)
    await send(page, 'and of Italy?')
    await waitForReplyEnd(page)
    const second = page.locator('[data-testid="user-message"][data-seq="2"]')
    // Esc cancels an edit: nothing is forked.
    await second.getByTestId('edit-message').click()
    await page.getByTestId('edit-input').press('Escape')
    expect(await page.getByTestId('message-editor').count()).toBe(0)
    expect(await second.locator('.bubble').isVisible()).toBe(true)
    expect(currentId(page)).toBe(source)

    await second.getByTestId('edit-message').click()
    const editor = page.getByTestId('edit-input')
    expect(await editor.inputValue()).toBe('and of Italy?')
    await editor.fill('and of Spain?')
    await page.screenshot({ path: join(OUTPUT_DIR, 'edit-message.png') })
    await page.getByTestId('edit-send').click()
    await page.waitForFunction((previous) => decodeURIComponent(location.hash.slice(1)) !== previous, source)
    const fork = currentId(page)
    await waitForReplyEnd(page)
    await expect
      .poll(() => page.getByTestId('user-message').locator('.bubble').allTextContents())
      .toEqual(['what is the capital of France?', 'and of Spain?'])
    // The reply answers the edited question (the view may still show the copied reply a moment).
    await expect
      .poll(() => page.getByTestId('agent-message').last().getByTestId('agent-text').textContent())
      .toContain('and of Spain?')
    await expect.poll(async () => (await playground.persister.getMessages(fork)).length).toBe(4)
    expect((await playground.persister.getSession(fork))?.forkedFrom).toEqual({ sessionId: source, seq: 1 })
    const stored = await playground.persister.getMessages(fork)
    expect(stored.map((message) => [message.seq, message.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
      [2, 'user'],
      [3, 'agent'],
    ])
    expect(stored[2]?.content).toBe('and of Spain?')
    expect((await playground.persister.getMessages(source))[2]?.content).toBe('and of Italy?')

    // The first message has nothing before it: its edit starts a new session with the same settings.
    await page.locator('[data-testid="user-message"][data-seq="0"] [data-testid="edit-message"]').click()
    await page.getByTestId('edit-input').fill('what is the capital of Peru?')
    await page.getByTestId('edit-input').press('Enter')
    await page.waitForFunction((previous) => decodeURIComponent(location.hash.slice(1)) !== previous, fork)
    const fresh = currentId(page)
    await waitForReplyEnd(page)
    await expect
      .poll(() => page.getByTestId('user-message').locator('.bubble').allTextContents())
      .toEqual(['what is the capital of Peru?'])
    await expect.poll(async () => (await playground.persister.getMessages(fresh)).length).toBe(2)
    const freshData = await playground.persister.getSession(fresh)
    expect(freshData).toMatchObject({ model: 'agentx-demo-1', metadata: { provider: 'demo' } })
    expect(freshData?.forkedFrom).toBeUndefined()
  }, 60_000)

  it('renames a session in place: Enter saves (stored, listed, kept after a reload), Esc cancels', async () => {
    const id = await newSession(page)
    await send(page, 'a session to rename')
    await waitForReplyEnd(page)
    await page.getByTestId('rename-session').click()
    const input = page.getByTestId('rename-input')
    expect(await input.inputValue()).toBe('a session to rename')
    await input.fill('Weekly planning')
    await input.press('Enter')
    await expect.poll(() => page.getByTestId('session-title').textContent()).toBe('Weekly planning')
    await expect
      .poll(async () => (await playground.persister.getSession(id))?.summary)
      .toBe('Weekly planning')
    expect(
      await page
        .locator(`[data-testid="session-item"][data-id="${id}"] [data-testid="session-summary"]`)
        .textContent(),
    ).toBe('Weekly planning')
    await page.getByTestId('rename-session').click()
    await page.getByTestId('rename-input').fill('Not this')
    await page.getByTestId('rename-input').press('Escape')
    expect(await page.getByTestId('rename-input').count()).toBe(0)
    expect(await page.getByTestId('session-title').textContent()).toBe('Weekly planning')
    // A later send keeps the chosen name.
    await send(page, 'one more message')
    await waitForReplyEnd(page)
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.getByTestId('session-title').textContent()).toBe('Weekly planning')
    expect((await playground.persister.getSession(id))?.summary).toBe('Weekly planning')
  }, 60_000)

  it('switches to a dark theme that stays after a reload', async () => {
    const light = await page.evaluate(
      () => getComputedStyle(document.querySelector('.main')!).backgroundColor,
    )
    await page.getByTestId('theme-toggle').click()
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark')
    await page.reload()
    await page.waitForSelector('body[data-ready="true"]')
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark')
    const dark = await page.evaluate(
      () => getComputedStyle(document.querySelector('.conversation-header')!).backgroundColor,
    )
    expect(dark).toBe('rgb(17, 26, 46)')
    expect(light).not.toBe(dark)
    await page.screenshot({ path: join(OUTPUT_DIR, 'dark.png') })
    await page.getByTestId('theme-toggle').click()
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light')
    await page.getByTestId('theme-toggle').click()
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBeUndefined()
  })

  it('has keyboard shortcuts: Ctrl+K search, Alt+N new session, ? help, Esc stop', async () => {
    await page.keyboard.press('Control+k')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
      'session-search',
    )
    const before = currentId(page)
    await page.keyboard.press('Alt+n')
    await page.waitForFunction((previous) => decodeURIComponent(location.hash.slice(1)) !== previous, before)
    await expect.poll(() => page.getByTestId('state-badge').textContent()).toBe('created')
    await page.locator('body').click({ position: { x: 700, y: 300 } })
    await page.keyboard.press('?')
    expect(await page.getByTestId('shortcuts-dialog').isVisible()).toBe(true)
    await page.keyboard.press('Escape')
    expect(await page.getByTestId('shortcuts-dialog').isVisible()).toBe(false)
    await send(page, '/long')
    await page.waitForFunction(
      () => (document.querySelector('.message.agent.streaming')?.textContent?.length ?? 0) > 10,
    )
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByTestId('state-badge').textContent()).toBe('aborted')
  })
})
