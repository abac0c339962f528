// The AgentX playground UI: plain JavaScript, no build step. Model output is only ever rendered
// with text nodes (see markdown.js), never with innerHTML.
import { renderMarkdown } from './markdown.js'

const $ = (id) => document.getElementById(id)

const ui = {
  providerSelect: $('provider-select'),
  modelInput: $('model-input'),
  modelOptions: $('model-options'),
  systemPrompt: $('system-prompt'),
  providerNote: $('provider-note'),
  newSession: $('new-session'),
  sessionList: $('session-list'),
  sessionCount: $('session-count'),
  storageInfo: $('storage-info'),
  title: $('session-title'),
  meta: $('session-meta'),
  stateBadge: $('state-badge'),
  deleteSession: $('delete-session'),
  conversation: $('conversation'),
  notice: $('notice'),
  errorBanner: $('error-banner'),
  errorKind: $('error-kind'),
  errorMessage: $('error-message'),
  retryButton: $('retry-button'),
  dismissError: $('dismiss-error'),
  composer: $('composer'),
  input: $('message-input'),
  send: $('send-button'),
  stop: $('stop-button'),
  dialog: $('confirm-dialog'),
  confirmSummary: $('confirm-summary'),
  confirmCancel: $('confirm-cancel'),
  confirmDelete: $('confirm-delete'),
}

const state = {
  /** @type {Array<{id:string,label:string,offline:boolean,models:string[],defaultModel:string,available:boolean,unavailableReason?:string}>} */
  providers: [],
  /** @type {Array<any>} */
  sessions: [],
  /** Whether older sessions are left to load. */
  hasMore: false,
  /** @type {string | undefined} */
  currentId: undefined,
  /** The session whose reply is streaming, and the fetch behind it. */
  streaming: undefined,
  /** The text of the last message sent in the current session (for Retry). */
  lastSent: undefined,
  /** Tool cards by tool call id, to attach results. */
  toolCards: new Map(),
}

// --- API ------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`)
    this.status = status
    this.error = error ?? { code: `HTTP_${status}`, message: `HTTP ${status}` }
  }
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (response.status === 204) return undefined
  const json = await response.json().catch(() => undefined)
  if (!response.ok) throw new ApiError(response.status, json?.error)
  return json
}

/** Reads a `text/event-stream` body and calls `onEvent(type, data)` per event. */
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    buffer += value.replace(/\r\n?/g, '\n')
    let boundary = buffer.indexOf('\n\n')
    while (boundary !== -1) {
      const frame = buffer.slice(0, boundary)
      buffer = buffer.slice(boundary + 2)
      let type = 'message'
      const data = []
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) continue
        if (line.startsWith('event:')) type = line.slice(6).trim()
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      }
      if (data.length > 0) onEvent(type, JSON.parse(data.join('\n')))
      boundary = buffer.indexOf('\n\n')
    }
  }
}

// --- small helpers --------------------------------------------------------------------------

function el(tag, className, text) {
  const node = document.createElement(tag)
  if (className) node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

const numberFormat = new Intl.NumberFormat('en')
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })

function timeAgo(iso) {
  const seconds = Math.round((Date.parse(iso) - Date.now()) / 1000)
  const abs = Math.abs(seconds)
  if (abs < 45) return 'just now'
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute')
  if (abs < 86_400) return relative.format(Math.round(seconds / 3600), 'hour')
  return relative.format(Math.round(seconds / 86_400), 'day')
}

function tokens(usage) {
  if (!usage?.totalTokens) return '0 tokens'
  return `${numberFormat.format(usage.totalTokens)} tokens (${numberFormat.format(usage.inputTokens)} in · ${numberFormat.format(usage.outputTokens)} out)`
}

function providerLabel(id) {
  return state.providers.find((provider) => provider.id === id)?.label ?? id
}

function textOf(content) {
  if (typeof content === 'string') return content
  return content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('')
}

function formatJson(value) {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2)
    } catch {
      return value
    }
  }
  return JSON.stringify(value, null, 2)
}

function resultText(content) {
  return formatJson(typeof content === 'string' ? content : textOf(content))
}

function setBadge(node, sessionState) {
  node.textContent = sessionState
  node.className = `badge state-${sessionState}`
  node.dataset.state = sessionState
}

// --- providers ------------------------------------------------------------------------------

function renderProviders() {
  ui.providerSelect.replaceChildren()
  for (const provider of state.providers) {
    const option = el('option', '', provider.available ? provider.label : `${provider.label} — unavailable`)
    option.value = provider.id
    option.disabled = !provider.available
    ui.providerSelect.append(option)
  }
  const firstReal = state.providers.find((provider) => provider.available && !provider.offline)
  ui.providerSelect.value = (firstReal ?? state.providers.find((provider) => provider.available))?.id ?? ''
  onProviderChange()
}

function onProviderChange() {
  const provider = state.providers.find((candidate) => candidate.id === ui.providerSelect.value)
  ui.modelOptions.replaceChildren(
    ...(provider?.models ?? []).map((model) => Object.assign(el('option'), { value: model })),
  )
  ui.modelInput.value = provider?.defaultModel ?? ''
  ui.newSession.disabled = !provider?.available
  ui.providerNote.replaceChildren()
  if (provider?.offline) {
    ui.providerNote.append(el('span', 'tag offline', 'offline demo'))
    ui.providerNote.append(' Scripted replies, no model is called. Set an API key to use a real provider.')
  } else if (provider) {
    ui.providerNote.append(
      el('span', 'tag live', 'live'),
      ` Calls ${provider.label} with your key from the server's environment.`,
    )
  }
}

// --- session list ---------------------------------------------------------------------------

const PAGE_SIZE = 50

/** Reloads the list, keeping as many rows as are shown (at least one page). */
async function loadSessions() {
  const limit = Math.max(PAGE_SIZE, Math.ceil(state.sessions.length / PAGE_SIZE) * PAGE_SIZE)
  const { sessions } = await api('GET', `/api/sessions?limit=${limit}`)
  state.sessions = sessions
  state.hasMore = sessions.length === limit
  renderSessionList()
}

/** Appends the next page of older sessions. */
async function loadMoreSessions() {
  const { sessions } = await api('GET', `/api/sessions?limit=${PAGE_SIZE}&offset=${state.sessions.length}`)
  const known = new Set(state.sessions.map((session) => session.id))
  state.sessions.push(...sessions.filter((session) => !known.has(session.id)))
  state.hasMore = sessions.length === PAGE_SIZE
  renderSessionList()
}

function renderSessionList() {
  renderSessionItems()
  if (state.hasMore) {
    const more = el('button', 'load-more', 'Load older sessions')
    more.type = 'button'
    more.dataset.testid = 'load-more'
    more.addEventListener('click', () => void loadMoreSessions().catch(() => undefined))
    const item = el('li')
    item.append(more)
    ui.sessionList.append(item)
  }
}

function renderSessionItems() {
  ui.sessionCount.textContent = `${state.sessions.length}${state.hasMore ? '+' : ''}`
  if (state.sessions.length === 0) {
    ui.sessionList.replaceChildren(el('li', 'empty-list', 'No sessions yet. Create one above.'))
    return
  }
  ui.sessionList.replaceChildren(
    ...state.sessions.map((session) => {
      const item = el('li', `session-item${session.id === state.currentId ? ' selected' : ''}`)
      item.dataset.id = session.id
      item.dataset.testid = 'session-item'
      const open = el('button', 'session-open')
      open.type = 'button'
      open.addEventListener('click', () => selectSession(session.id))
      const summary = el('div', 'session-summary', session.summary || 'New session')
      summary.dataset.testid = 'session-summary'
      const line = el('div', 'session-line')
      const provider = state.providers.find((candidate) => candidate.id === session.provider)
      line.append(
        el(
          'span',
          `tag${provider?.offline ? ' offline' : ''}`,
          provider?.offline ? 'demo' : session.provider,
        ),
      )
      line.append(el('span', 'session-model', session.model))
      const stats = el('div', 'session-stats')
      stats.append(
        el('span', '', `${numberFormat.format(session.tokenUsage?.totalTokens ?? 0)} tok`),
        el('span', '', timeAgo(session.lastActivity)),
      )
      const badge = el('span')
      setBadge(badge, session.state)
      stats.append(badge)
      open.append(summary, line, stats)
      const remove = el('button', 'icon-button', '×')
      remove.type = 'button'
      remove.title = 'Delete session'
      remove.setAttribute('aria-label', 'Delete session')
      remove.dataset.testid = 'session-delete'
      remove.addEventListener('click', () => confirmDelete(session))
      item.append(open, remove)
      return item
    }),
  )
}

function upsertSession(session) {
  const index = state.sessions.findIndex((candidate) => candidate.id === session.id)
  if (index === -1) state.sessions.unshift(session)
  else state.sessions[index] = session
  state.sessions.sort((a, b) =>
    a.lastActivity < b.lastActivity ? 1 : a.lastActivity > b.lastActivity ? -1 : 0,
  )
  renderSessionList()
}

// --- conversation ---------------------------------------------------------------------------

function currentSession() {
  return state.sessions.find((session) => session.id === state.currentId)
}

function renderHeader() {
  const session = currentSession()
  if (!session) {
    ui.title.textContent = 'AgentX Playground'
    ui.meta.textContent = 'Create a session to start chatting.'
    ui.stateBadge.hidden = true
    ui.deleteSession.hidden = true
    return
  }
  ui.title.textContent = session.summary || 'New session'
  ui.meta.replaceChildren(
    el('span', '', providerLabel(session.provider)),
    el('span', 'dot', '·'),
    el('span', 'mono', session.model),
    el('span', 'dot', '·'),
    el('span', '', tokens(session.tokenUsage)),
  )
  if (!session.canSend)
    ui.meta.append(el('span', 'dot', '·'), el('span', 'warn', 'provider not configured: read only'))
  setBadge(ui.stateBadge, session.state)
  ui.stateBadge.hidden = false
  ui.deleteSession.hidden = false
}

function renderEmptyState() {
  const card = el('div', 'welcome')
  card.append(el('h2', '', 'Talk to any provider, keep every word.'))
  card.append(
    el(
      'p',
      '',
      'Each session is saved as it streams: restart the server and it is all still here. Pick a provider, create a session and try:',
    ),
  )
  const list = el('ul')
  for (const tip of [
    'hello — a streamed reply',
    'what is 12 * (3 + 4)? — a tool call and its result',
    'why is the sky blue? — thinking you can unfold',
    'tell me a long story — press Stop half way',
    '/error — an error with its kind, and Retry',
  ]) {
    list.append(el('li', '', tip))
  }
  card.append(list)
  ui.conversation.replaceChildren(card)
}

function updateComposer() {
  const session = currentSession()
  const streaming = state.streaming !== undefined && state.streaming.sessionId === state.currentId
  ui.input.disabled = !session?.canSend
  ui.send.disabled = !session?.canSend || state.streaming !== undefined
  ui.send.hidden = streaming
  ui.stop.hidden = !streaming
}

async function selectSession(id) {
  state.currentId = id
  state.toolCards = new Map()
  hideError()
  hideNotice()
  renderSessionList()
  if (!id) {
    history.replaceState(null, '', '/')
    renderHeader()
    renderEmptyState()
    updateComposer()
    return
  }
  history.replaceState(null, '', `#${encodeURIComponent(id)}`)
  let detail
  try {
    detail = await api('GET', `/api/sessions/${encodeURIComponent(id)}`)
  } catch (error) {
    showError(error.error ?? { code: 'NETWORK', message: String(error.message) }, false)
    return
  }
  if (state.currentId !== id) return
  upsertSession(detail.session)
  renderHeader()
  renderMessages(detail.messages)
  const lastUser = [...detail.messages].reverse().find((message) => message.type === 'user')
  state.lastSent = lastUser ? textOf(lastUser.content) : undefined
  if (detail.session.state === 'error' && state.lastSent) {
    showError({ kind: 'error', message: 'The last reply failed. Send again to retry.' }, true)
  }
  updateComposer()
  ui.input.focus()
}

function renderMessages(messages) {
  ui.conversation.replaceChildren()
  state.toolCards = new Map()
  const systemPrompt = currentSession()?.systemPrompt
  if (systemPrompt) {
    const details = el('details', 'system-prompt')
    details.dataset.testid = 'session-system-prompt'
    details.append(el('summary', '', 'System prompt'), el('div', 'system-prompt-text', systemPrompt))
    ui.conversation.append(details)
  }
  if (messages.length === 0) {
    const hint = el('div', 'conversation-hint', 'No messages yet. Say hello!')
    ui.conversation.append(hint)
    return
  }
  for (const message of messages) {
    if (message.type === 'user') ui.conversation.append(userBubble(textOf(message.content)))
    else if (message.type === 'agent') ui.conversation.append(agentBubble(message))
    else if (message.type === 'tool') attachToolResults(message.content)
  }
  // A tool call whose reply was stopped or failed never got a result.
  for (const card of state.toolCards.values()) {
    if (!card.querySelector('.tool-result')) card.querySelector('.tool-status').textContent = 'no result'
  }
  scrollToBottom(true)
}

function userBubble(text) {
  const row = el('div', 'message user')
  row.dataset.testid = 'user-message'
  row.append(el('div', 'bubble', text))
  return row
}

/** An agent reply; `message` is a persisted message, or undefined for a live (streaming) one. */
function agentBubble(message) {
  const row = el('div', 'message agent')
  row.dataset.testid = 'agent-message'
  const avatar = el('div', 'avatar', 'AI')
  const body = el('div', 'agent-body')
  row.append(avatar, body)
  const view = { row, body, thinking: undefined, thinkingText: '', text: undefined, textValue: '', frame: 0 }
  row.view = view
  if (message) fillAgentBubble(view, message)
  else row.classList.add('streaming')
  return row
}

function fillAgentBubble(view, message) {
  view.body.replaceChildren()
  view.thinking = undefined
  view.text = undefined
  view.textValue = ''
  view.thinkingText = ''
  view.row.classList.remove('streaming')
  const content =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content
  for (const block of content) {
    if (block.type === 'thinking') appendThinking(view, block.text, false)
    else if (block.type === 'text') appendText(view, block.text, true)
    else if (block.type === 'tool_use') view.body.append(toolCard(block.id, block.name, block.input))
  }
  if (message.incomplete) {
    const label =
      message.stopReason === 'aborted'
        ? 'stopped — partial reply kept'
        : 'incomplete — the reply was cut short'
    const tag = el('div', 'incomplete-tag', label)
    tag.dataset.testid = 'incomplete-tag'
    view.body.append(tag)
  }
  if (message.usage) view.body.append(el('div', 'usage-line', tokens(message.usage)))
}

function appendThinking(view, text, live) {
  if (!view.thinking) {
    const details = el('details', 'thinking')
    details.dataset.testid = 'thinking'
    const summary = el('summary', '', live ? 'Thinking…' : 'Thinking')
    const body = el('div', 'thinking-text')
    details.append(summary, body)
    view.body.append(details)
    view.thinking = { details, summary, body }
  }
  view.thinkingText += text
  view.thinking.body.textContent = view.thinkingText
}

function appendText(view, text, immediate = false) {
  if (!view.text) {
    view.text = el('div', 'markdown')
    view.text.dataset.testid = 'agent-text'
    view.body.append(view.text)
  }
  view.textValue += text
  if (immediate) {
    view.text.replaceChildren(renderMarkdown(view.textValue))
    return
  }
  // Re-render at most once a frame while tokens stream in.
  if (!view.frame) {
    view.frame = requestAnimationFrame(() => {
      view.frame = 0
      view.text.replaceChildren(renderMarkdown(view.textValue))
      scrollToBottom(false)
    })
  }
}

function toolCard(id, name, input) {
  const card = el('div', 'tool-card')
  card.dataset.testid = 'tool-card'
  card.dataset.toolUseId = id
  const head = el('div', 'tool-head')
  head.append(
    el('span', 'tool-icon', 'ƒ'),
    el('span', 'tool-name', name),
    el('span', 'tool-status', 'running…'),
  )
  const inputBlock = el('pre', 'tool-input', formatJson(input))
  card.append(head, inputBlock)
  state.toolCards.set(id, card)
  return card
}

function setToolResult(toolUseId, content, isError) {
  const card = state.toolCards.get(toolUseId)
  if (!card) return
  card.querySelector('.tool-status').textContent = isError ? 'failed' : 'done'
  card.classList.toggle('failed', Boolean(isError))
  card.querySelector('.tool-result')?.remove()
  const result = el('pre', 'tool-result', resultText(content))
  result.dataset.testid = 'tool-result'
  card.append(result)
}

function attachToolResults(content) {
  if (!Array.isArray(content)) return
  for (const block of content)
    if (block.type === 'tool_result') setToolResult(block.toolUseId, block.content, block.isError)
}

function scrollToBottom(force) {
  const c = ui.conversation
  if (force || c.scrollHeight - c.scrollTop - c.clientHeight < 160) c.scrollTop = c.scrollHeight
}

// --- errors and notices ---------------------------------------------------------------------

function showError(error, canRetry) {
  ui.errorKind.textContent = error.kind ?? error.code ?? 'error'
  ui.errorMessage.textContent = error.message ?? 'Something went wrong.'
  ui.errorBanner.dataset.kind = error.kind ?? error.code ?? 'error'
  ui.retryButton.hidden = !canRetry
  ui.errorBanner.hidden = false
}

function hideError() {
  ui.errorBanner.hidden = true
}

function showNotice(text) {
  ui.notice.textContent = text
  ui.notice.hidden = false
}

function hideNotice() {
  ui.notice.hidden = true
}

// --- sending --------------------------------------------------------------------------------

async function sendMessage(text) {
  const sessionId = state.currentId
  if (!sessionId || state.streaming || text.trim() === '') return
  hideError()
  hideNotice()
  state.lastSent = text
  ui.conversation.querySelector('.welcome, .conversation-hint')?.remove()
  ui.conversation.append(userBubble(text))
  scrollToBottom(true)
  const controller = new AbortController()
  state.streaming = { sessionId, controller }
  updateComposer()
  let live
  const liveBubble = () => {
    if (!live) live = agentBubble(undefined)
    // Switching to another session and back re-renders the conversation: put the bubble back.
    if (!live.isConnected) {
      ui.conversation.append(live)
      for (const card of live.querySelectorAll('.tool-card'))
        state.toolCards.set(card.dataset.toolUseId, card)
    }
    return live.view
  }
  const active = () => state.currentId === sessionId
  try {
    const response = await fetch(`/api/sessions/${encodeURIComponent(sessionId)}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: text }),
      signal: controller.signal,
    })
    if (!response.ok) {
      const json = await response.json().catch(() => undefined)
      throw new ApiError(response.status, json?.error)
    }
    await readEvents(response, (type, event) => {
      if (!active()) return
      switch (type) {
        case 'state': {
          const session = currentSession()
          if (session) {
            session.state = event.state
            setBadge(ui.stateBadge, event.state)
            renderSessionList()
          }
          break
        }
        case 'text-delta':
          appendText(liveBubble(), event.text)
          break
        case 'thinking-delta':
          appendThinking(liveBubble(), event.text, true)
          break
        case 'tool-call':
          liveBubble().body.append(toolCard(event.id, event.name, event.input))
          scrollToBottom(false)
          break
        case 'tool-result':
          setToolResult(event.toolUseId, event.content, event.isError)
          break
        case 'message':
          if (event.message.type === 'agent') {
            const view = liveBubble()
            if (view.frame) cancelAnimationFrame(view.frame)
            view.frame = 0
            fillAgentBubble(view, event.message)
            live.dataset.messageId = event.message.id
            live = undefined
            scrollToBottom(false)
          } else if (event.message.type === 'user') {
            const session = currentSession()
            if (session && !session.summary) {
              // The server takes the first message as the summary; show it at once.
              const flat = textOf(event.message.content).replace(/\s+/g, ' ').trim()
              session.summary = flat.length > 100 ? `${flat.slice(0, 99)}…` : flat
              renderHeader()
              renderSessionList()
            }
          }
          break
        case 'retry':
          showNotice(
            `${event.error.kind ?? event.error.code}: ${event.error.message} — retrying (attempt ${event.attempt}) in ${Math.round(event.delayMs)} ms…`,
          )
          break
        case 'retries-exhausted':
          hideNotice()
          break
        case 'persist-error':
          showNotice(`Storage problem: ${event.error.message}`)
          break
        case 'error':
          hideNotice()
          showError(event.error, true)
          break
        case 'done':
          hideNotice()
          break
        default:
          break
      }
    })
  } catch (error) {
    if (error?.name !== 'AbortError') {
      showError(
        error instanceof ApiError
          ? error.error
          : { code: 'NETWORK', message: String(error?.message ?? error) },
        !(error instanceof ApiError && error.status === 409),
      )
    }
  } finally {
    if (live) {
      // The stream ended without a final message for this bubble (nothing was streamed, or it was cut).
      if (
        live.view.textValue === '' &&
        live.view.thinkingText === '' &&
        live.view.body.childElementCount === 0
      )
        live.remove()
      else live.classList.remove('streaming')
    }
    state.streaming = undefined
    updateComposer()
    await refreshCurrent(sessionId)
  }
}

/** Re-reads the list and the header after a send (usage, state, summary). */
async function refreshCurrent(sessionId) {
  try {
    await loadSessions()
    if (state.currentId === sessionId) {
      renderHeader()
      if (currentSession()?.state === 'aborted')
        showNotice('Stopped. The partial reply was kept; send a new message to continue.')
    }
  } catch {
    // The list refreshes on the next action.
  }
  updateComposer()
}

async function stopStreaming() {
  const streaming = state.streaming
  if (!streaming) return
  ui.stop.disabled = true
  try {
    await api('POST', `/api/sessions/${encodeURIComponent(streaming.sessionId)}/abort`)
  } catch {
    // The server could not be reached: at least stop reading.
    streaming.controller.abort()
  } finally {
    ui.stop.disabled = false
  }
}

// --- create / delete ------------------------------------------------------------------------

async function createSession() {
  ui.newSession.disabled = true
  try {
    const systemPrompt = ui.systemPrompt.value.trim()
    const { session } = await api('POST', '/api/sessions', {
      provider: ui.providerSelect.value,
      model: ui.modelInput.value.trim(),
      ...(systemPrompt === '' ? {} : { systemPrompt }),
    })
    upsertSession(session)
    await selectSession(session.id)
  } catch (error) {
    showError(error.error ?? { code: 'NETWORK', message: String(error.message) }, false)
  } finally {
    ui.newSession.disabled = false
  }
}

function confirmDelete(session) {
  ui.confirmSummary.textContent = session.summary || 'New session'
  ui.dialog.dataset.sessionId = session.id
  ui.dialog.showModal()
}

async function deleteConfirmed() {
  const id = ui.dialog.dataset.sessionId
  ui.dialog.close()
  if (!id) return
  try {
    await api('DELETE', `/api/sessions/${encodeURIComponent(id)}`)
  } catch (error) {
    if (error.status !== 404) {
      showError(error.error ?? { code: 'NETWORK', message: String(error.message) }, false)
      return
    }
  }
  state.sessions = state.sessions.filter((session) => session.id !== id)
  if (state.currentId === id) await selectSession(state.sessions[0]?.id)
  else renderSessionList()
}

// --- wiring ---------------------------------------------------------------------------------

ui.providerSelect.addEventListener('change', onProviderChange)
ui.newSession.addEventListener('click', createSession)
ui.composer.addEventListener('submit', (event) => {
  event.preventDefault()
  const text = ui.input.value
  if (text.trim() === '' || ui.send.disabled) return
  ui.input.value = ''
  ui.input.style.height = ''
  void sendMessage(text)
})
ui.input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault()
    ui.composer.requestSubmit()
  }
})
ui.stop.addEventListener('click', stopStreaming)
ui.input.addEventListener('input', () => {
  ui.input.style.height = 'auto'
  ui.input.style.height = `${Math.min(ui.input.scrollHeight + 2, 200)}px`
})
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && state.streaming && !ui.dialog.open) void stopStreaming()
})
ui.retryButton.addEventListener('click', () => {
  if (state.lastSent) void sendMessage(state.lastSent)
})
ui.dismissError.addEventListener('click', hideError)
ui.deleteSession.addEventListener('click', () => {
  const session = currentSession()
  if (session) confirmDelete(session)
})
ui.confirmCancel.addEventListener('click', () => ui.dialog.close())
ui.confirmDelete.addEventListener('click', deleteConfirmed)
setInterval(() => {
  if (!state.streaming && state.sessions.length > 0) renderSessionList()
}, 30_000)

async function start() {
  try {
    const { providers, storage } = await api('GET', '/api/providers')
    state.providers = providers
    renderProviders()
    ui.storageInfo.replaceChildren(
      el('span', 'storage-kind', storage.kind),
      el('span', 'mono', storage.location),
    )
    await loadSessions()
    const fromHash = decodeURIComponent(location.hash.slice(1))
    const initial = state.sessions.find((session) => session.id === fromHash) ?? state.sessions[0]
    await selectSession(initial?.id)
    document.body.dataset.ready = 'true'
  } catch (error) {
    showError(
      error.error ?? { code: 'NETWORK', message: `Could not reach the playground server: ${error.message}` },
      false,
    )
  }
}

void start()
