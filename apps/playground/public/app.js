// The AgentX playground UI: plain JavaScript modules, no build step. Model output is only ever
// rendered with text nodes (see markdown.js), never with innerHTML.
//
// Sends run on the server: this page only watches them (one event stream at a time, for the open
// session). Leaving a session, reloading or closing the tab stops watching, not the reply; opening
// the session again reattaches to it. Other tabs and windows are followed by polling the list and
// by a BroadcastChannel between tabs of this browser.
import { ApiError, api, openStream, sessionPath } from './api.js'
import { Conversation } from './conversation.js'
import { el, idFromHash, setBadge } from './dom.js'
import { loadSessions, onSessionRow, renderSessionList, upsertSession } from './session-list.js'
import { currentSession, isWatching, providerOf, state, ui } from './state.js'
import { setUpShortcuts } from './shortcuts.js'
import { setUpTheme } from './theme.js'
import {
  announce,
  explainState,
  hideError,
  hideNotice,
  renderHeader,
  showError,
  showNotice,
} from './header.js'

const SYNC_INTERVAL_MS = 2500

const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('agentx-playground') : undefined
const tell = (message) => channel?.postMessage(message)

const conversation = new Conversation(ui.conversation, {
  onAnswer: (answers) => void sendContent(answers),
  onFork: (seq) => void forkSession(seq),
  onEdit: (seq, text) => void editAsFork(seq, text),
})

// --- small helpers --------------------------------------------------------------------------

function isNarrow() {
  return window.matchMedia('(max-width: 760px)').matches
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
  const provider = providerOf(ui.providerSelect.value)
  ui.modelOptions.replaceChildren(
    ...(provider?.models ?? []).map((model) => Object.assign(el('option'), { value: model })),
  )
  ui.modelInput.value = provider?.defaultModel ?? ''
  ui.newSession.disabled = !provider?.available
  ui.providerNote.replaceChildren()
  if (provider?.offline) {
    ui.providerNote.append(el('span', 'tag offline', 'offline demo'))
    ui.providerNote.append(' Scripted replies, no model is called. Send /help for the tour.')
  } else if (provider) {
    ui.providerNote.append(
      el('span', 'tag live', 'live'),
      ` Calls ${provider.label} with your key from the server's environment.`,
    )
  }
}

// --- state changes -------------------------------------------------------------------------

/** Changes the state of the open session as events report it (list, badge, composer). */
function setCurrentState(sessionState) {
  const session = currentSession()
  if (!session) return
  session.state = sessionState
  setBadge(ui.stateBadge, sessionState)
  renderSessionList()
  updateComposer()
}

// --- composer -------------------------------------------------------------------------------

function updateComposer() {
  const session = currentSession()
  const running = session?.state === 'active' || isWatching()
  const ownRun = isWatching() && state.watch.origin === 'send'
  let note
  if (!session) note = undefined
  else if (session.parentSessionId) note = 'This is a sub-agent’s child session: read only.'
  else if (!session.canSend) note = 'The provider of this session is not configured: read only.'
  else if (running && !ownRun)
    note =
      'A reply is running for this session — started in another tab, window or before a reload. It keeps running on the server: watch it here, or press Stop. You can send once it has finished.'
  else if (session.state === 'waiting_input')
    note = 'The agent waits for your answer above. A message sent instead declines the pending calls.'
  ui.composerNote.textContent = note ?? ''
  ui.composerNote.hidden = note === undefined
  const canType = Boolean(session?.canSend) && !session?.parentSessionId
  ui.input.disabled = !canType
  ui.send.disabled = !canType || running || state.submitting
  ui.send.title = running ? 'A reply is running for this session' : ''
  ui.send.hidden = running && canType
  ui.stop.hidden = !(running && canType)
  ui.optionsToggle.disabled = !canType
  renderAgentOptions()
}

function renderAgentOptions() {
  const session = currentSession()
  const provider = session ? providerOf(session.provider) : undefined
  const agents = provider?.agents ?? []
  const key = `${session?.id}:${session?.activeAgent}:${agents.length}`
  if (ui.agentSelect.dataset.key === key) return
  ui.agentSelect.dataset.key = key
  const previous = ui.agentSelect.value
  const continueWith = el('option', '', `continue (${session?.activeAgent ?? 'default'})`)
  continueWith.value = ''
  ui.agentSelect.replaceChildren(
    continueWith,
    ...agents.map((agent) => {
      const option = el('option', '', agent.description ? `${agent.name} — ${agent.description}` : agent.name)
      option.value = agent.name
      return option
    }),
  )
  ui.agentSelect.disabled = agents.length === 0
  if (agents.some((agent) => agent.name === previous)) ui.agentSelect.value = previous
  ui.sendModelOptions.replaceChildren(
    ...(provider?.models ?? []).map((model) => Object.assign(el('option'), { value: model })),
  )
}

/**
 * The per-send options the user set (agent, model, temperature, max tokens, output schema). For
 * the demo's `/json` (`text`), the example schema when none is given. Throws when the schema is
 * not JSON.
 */
function sendOptions(text) {
  const options = {}
  if (ui.agentSelect.value !== '') options.agent = ui.agentSelect.value
  if (ui.sendModel.value.trim() !== '') options.model = ui.sendModel.value.trim()
  if (ui.sendTemperature.value !== '') options.temperature = Number(ui.sendTemperature.value)
  if (ui.sendMaxTokens.value !== '') options.maxOutputTokens = Number(ui.sendMaxTokens.value)
  const schema = ui.sendOutput.value.trim()
  if (schema !== '') {
    try {
      options.output = { name: ui.sendOutput.dataset.name || 'output', schema: JSON.parse(schema) }
    } catch {
      throw new Error(
        'The output schema is not valid JSON: fix it in the ⚙ options, or clear it for a plain reply.',
      )
    }
  } else if (
    text !== undefined &&
    /^\/json\b/i.test(text.trim()) &&
    providerOf(currentSession()?.provider)?.offline &&
    state.outputExample
  ) {
    options.output = state.outputExample
  }
  return options
}

/** The send options, or `undefined` after showing why they cannot be used. */
function checkedSendOptions(text) {
  try {
    return sendOptions(text)
  } catch (error) {
    showError({ code: 'VALIDATION', message: error.message }, false)
    return undefined
  }
}

// --- selecting a session --------------------------------------------------------------------

function renderEmptyState() {
  const card = el('div', 'welcome')
  card.append(el('h2', '', 'Talk to any provider, keep every word.'))
  card.append(
    el(
      'p',
      '',
      'Each session is saved as it streams: reload, restart the server, it is all still here. Create a session with the offline demo and try:',
    ),
  )
  const list = el('ul')
  for (const tip of [
    '/help — the tour',
    '/approve — a tool that waits for your approval',
    '/ask — the agent asks you a question',
    '/handoff, /delegate — several agents, sub-agents in child sessions',
    '/long — press Stop, or reload: the reply keeps running',
    '/error — an error with its kind, and Retry',
  ]) {
    list.append(el('li', '', tip))
  }
  card.append(list)
  ui.conversation.replaceChildren(card)
}

/** Stops reading the open session's event stream (the reply itself goes on on the server). */
function stopWatching() {
  const watch = state.watch
  if (!watch) return
  state.watch = undefined
  watch.controller.abort()
}

async function selectSession(id, { fromHash = false } = {}) {
  if (state.currentId !== id || !isWatching(id)) stopWatching()
  state.currentId = id
  state.notFound = undefined
  hideError()
  hideNotice()
  closeSidebar()
  renderSessionList()
  if (!id) {
    state.detached = undefined
    if (!fromHash) history.replaceState(null, '', location.pathname)
    renderHeader()
    renderEmptyState()
    updateComposer()
    return
  }
  if (!fromHash) history.replaceState(null, '', `#${encodeURIComponent(id)}`)
  let detail
  try {
    detail = await api('GET', sessionPath(id))
  } catch (error) {
    if (state.currentId !== id) return
    if (error instanceof ApiError && error.status === 404) {
      // A link to a session that no longer exists (or never did): say so, open nothing.
      state.currentId = undefined
      state.detached = undefined
      state.notFound = `There is no session ${id}: it was deleted, or the link is wrong.`
      renderHeader()
      renderEmptyState()
      updateComposer()
      showNotice(state.notFound)
      return
    }
    showError(error.error ?? { code: 'NETWORK', message: String(error.message) }, false)
    return
  }
  if (state.currentId !== id) return
  showDetail(detail)
  ui.input.focus({ preventScroll: true })
}

/** Renders a session detail from `GET /api/sessions/:id`, and reattaches to its running send. */
function showDetail(detail) {
  const session = detail.session
  state.detached = state.sessions.some((candidate) => candidate.id === session.id) ? undefined : session
  upsertSession(session)
  renderHeader()
  const provider = providerOf(session.provider)
  conversation.reset(session, detail.messages, {
    agentTools: provider?.agentTools ?? [],
    agents: provider?.agents ?? [],
    running: detail.running !== undefined,
  })
  explainState(session, detail.lastError)
  if (detail.pending?.length > 0) conversation.showPending(detail.pending)
  updateComposer()
  if (detail.running && !isWatching(session.id)) attach(session.id, detail.running.resumeAfter)
}

// --- watching runs --------------------------------------------------------------------------

/**
 * Reads a run's events into the open session's view until it ends. `origin` says who started it:
 * this tab (`send`) or someone else / an earlier page (`attach`).
 */
async function watchRun(sessionId, path, init, origin, onOpen) {
  stopWatching()
  const controller = new AbortController()
  const watch = { sessionId, controller, origin }
  state.watch = watch
  conversation.beginRun({ replayed: origin === 'attach' })
  updateComposer()
  let outcome
  let failed
  let pending
  try {
    outcome = await openStream(
      path,
      { ...init, signal: controller.signal },
      (type, event) => {
        if (state.watch !== watch) return
        onRunEvent(type, event)
        if (type === 'error') failed = event.error
        if (type === 'input-required') pending = event.pending
        if (type === 'done' && event.result?.pending) pending = event.result.pending
      },
      onOpen,
    )
  } finally {
    if (state.watch === watch) state.watch = undefined
  }
  if (outcome === 'aborted') return outcome
  conversation.finishLive()
  if (failed) announce(`The reply failed: ${failed.message}`)
  else if (pending?.length) announce('The agent is waiting for your answer.')
  else if (outcome === 'ended') announce('Reply finished.')
  await refreshAfterRun(sessionId, outcome)
  tell({ type: 'changed', id: sessionId })
  return outcome
}

function onRunEvent(type, event) {
  conversation.apply(type, event)
  switch (type) {
    case 'state':
      setCurrentState(event.state)
      if (event.state === 'active') {
        hideError()
        hideNotice()
      }
      break
    case 'message':
      if (event.message.type === 'user') {
        const session = currentSession()
        if (session && !session.summary) {
          const flat = (typeof event.message.content === 'string' ? event.message.content : '')
            .replace(/\s+/g, ' ')
            .trim()
          session.summary = flat.length > 100 ? `${flat.slice(0, 99)}…` : flat
          renderHeader()
          renderSessionList()
        }
      }
      break
    case 'handoff': {
      const session = currentSession()
      if (session) {
        session.activeAgent = event.to
        renderHeader()
      }
      break
    }
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
      showError(event.error, Boolean(event.error.retryable))
      break
    case 'done':
      hideNotice()
      break
    default:
      break
  }
}

/**
 * Re-reads the session after a run (state, usage, summary, last error) and the list. After a
 * refused send it only updates the header — and reattaches when a reply runs (started elsewhere).
 */
async function refreshAfterRun(sessionId, outcome) {
  try {
    await loadSessions()
    if (state.currentId !== sessionId) return
    const detail = await api('GET', sessionPath(sessionId))
    if (state.currentId !== sessionId || isWatching(sessionId)) return
    if (outcome === 'cut') {
      // The connection broke (server restart, network): show what is stored and reattach if it still runs.
      showDetail(detail)
      if (!detail.running) showNotice('The connection to the server was lost; this is what is stored.')
      return
    }
    upsertSession(detail.session)
    renderHeader()
    // Refused because another tab's send runs: show what that send stored (its question too),
    // then watch its reply below.
    if (outcome === 'refused' && detail.running) {
      const provider = providerOf(detail.session.provider)
      conversation.reset(detail.session, detail.messages, {
        agentTools: provider?.agentTools ?? [],
        agents: provider?.agents ?? [],
        running: true,
      })
    }
    if (outcome !== 'refused' && (detail.session.state !== 'error' || !state.shownError))
      explainState(detail.session, detail.lastError)
    // Refused answers (or a run that stopped to wait): the questions are still open.
    if (!detail.running && detail.pending?.length > 0 && !conversation.pendingPanel?.isConnected)
      conversation.showPending(detail.pending)
    if (detail.running) attach(sessionId, detail.running.resumeAfter)
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) await sessionGone(sessionId)
  } finally {
    updateComposer()
  }
}

/** Reattaches to the open session's running send, replaying the reply in flight from its start. */
function attach(sessionId, after) {
  void watchRun(
    sessionId,
    sessionPath(sessionId, `/events?after=${after}`),
    { method: 'GET' },
    'attach',
  ).catch(() => undefined)
}

// --- sending --------------------------------------------------------------------------------

/**
 * Sends text or answers. The input keeps the text until the server accepted the send; a refused
 * send (a validation error, a busy session) shows why and leaves it there.
 */
async function sendContent(content, { text } = {}) {
  const sessionId = state.currentId
  if (!sessionId || state.submitting) return
  hideError()
  hideNotice()
  const options = checkedSendOptions(text)
  if (options === undefined) return
  conversation.outputName = options.output?.name
  state.submitting = true
  updateComposer()
  let optimistic
  if (text !== undefined) {
    conversation.clearHint()
    optimistic = conversation.userBubble(text)
    optimistic.dataset.optimistic = 'true'
    ui.conversation.append(optimistic)
    conversation.scroll(true)
  }
  conversation.pendingPanel?.remove()
  tell({ type: 'changed', id: sessionId })
  await runRequest(
    sessionId,
    sessionPath(sessionId, '/messages'),
    { content, ...options },
    {
      onAccepted: () => {
        if (text !== undefined && ui.input.value === text) {
          ui.input.value = ''
          ui.input.style.height = ''
        }
      },
      onRefused: () => optimistic?.remove(),
    },
  )
}

async function retrySend() {
  const sessionId = state.currentId
  if (!sessionId || state.submitting) return
  hideError()
  hideNotice()
  const options = checkedSendOptions(undefined)
  if (options === undefined) return
  conversation.outputName = options.output?.name
  state.submitting = true
  updateComposer()
  await runRequest(sessionId, sessionPath(sessionId, '/retry'), options, {})
}

/** POSTs a send or retry and watches its events; a refusal (JSON error) is shown without Retry. */
async function runRequest(sessionId, path, body, { onAccepted, onRefused }) {
  try {
    await watchRun(
      sessionId,
      path,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      },
      'send',
      () => {
        state.submitting = false
        onAccepted?.()
        updateComposer()
      },
    )
  } catch (error) {
    onRefused?.()
    const view =
      error instanceof ApiError ? error.error : { code: 'NETWORK', message: String(error?.message ?? error) }
    if (error instanceof ApiError && error.error?.code === 'SESSION_BUSY')
      view.message =
        'A reply is already running for this session (in another tab or window). Wait for it, or stop it.'
    // Nothing was sent, so there is nothing to retry: the text stays in the input.
    showError(view, false)
    if (state.currentId === sessionId) await refreshAfterRun(sessionId, 'refused')
  } finally {
    state.submitting = false
    updateComposer()
  }
}

async function stopStreaming() {
  const sessionId = state.currentId
  if (!sessionId) return
  ui.stop.disabled = true
  try {
    await api('POST', sessionPath(sessionId, '/abort'))
  } catch {
    // The server could not be reached: at least stop reading.
    stopWatching()
  } finally {
    ui.stop.disabled = false
  }
}

// --- create / delete / fork / rename --------------------------------------------------------

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
    tell({ type: 'changed', id: session.id })
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
    await api('DELETE', sessionPath(id))
  } catch (error) {
    if (error.status !== 404) {
      showError(error.error ?? { code: 'NETWORK', message: String(error.message) }, false)
      return
    }
  }
  tell({ type: 'deleted', id })
  state.sessions = state.sessions.filter((session) => session.id !== id)
  if (state.currentId === id) await selectSession(state.sessions[0]?.id)
  else renderSessionList()
}

/** A session deleted elsewhere (another tab, window or process): it leaves the list and the view. */
async function sessionGone(id) {
  state.sessions = state.sessions.filter((session) => session.id !== id)
  if (state.detached?.id === id) state.detached = undefined
  if (state.currentId === id) {
    stopWatching()
    state.currentId = undefined
    history.replaceState(null, '', location.pathname)
    renderHeader()
    renderEmptyState()
    updateComposer()
    hideError()
    showNotice('This session was deleted (in another tab or window).')
  }
  renderSessionList()
}

/** Forks the open session through `throughSeq` (default: all of it), opens the fork and sends `resend` there. */
async function forkSession(throughSeq, resend) {
  const sessionId = state.currentId
  if (!sessionId) return
  try {
    const { session } = await api(
      'POST',
      sessionPath(sessionId, '/fork'),
      throughSeq === undefined ? {} : { throughSeq },
    )
    await openAndSend(session, resend)
  } catch (error) {
    showError(error.error ?? { code: 'NETWORK', message: String(error.message) }, false)
  }
}

/**
 * Edit and resend: the edited text goes to a fork made just before the edited message. The first
 * message has nothing before it to copy, so its edit starts a new session with the same provider,
 * model and system prompt.
 */
async function editAsFork(seq, text) {
  if (seq > 0) return forkSession(seq - 1, text)
  const source = currentSession()
  if (!source) return
  try {
    const { session } = await api('POST', '/api/sessions', {
      provider: source.provider,
      model: source.model,
      ...(source.systemPrompt ? { systemPrompt: source.systemPrompt } : {}),
    })
    await openAndSend(session, text)
  } catch (error) {
    showError(error.error ?? { code: 'NETWORK', message: String(error.message) }, false)
  }
}

async function openAndSend(session, text) {
  upsertSession(session)
  tell({ type: 'changed', id: session.id })
  await selectSession(session.id)
  if (text !== undefined && state.currentId === session.id) await sendContent(text, { text })
}

/** Renames the open session in place: Enter or leaving the field saves, Esc cancels. */
function renameSession() {
  const session = currentSession()
  if (!session || ui.titleBlock.querySelector('.rename-input')) return
  const input = el('input', 'rename-input')
  input.value = session.summary
  input.maxLength = 200
  input.placeholder = 'Session name'
  input.setAttribute('aria-label', 'Session name')
  input.dataset.testid = 'rename-input'
  let finished = false
  const finish = async (save) => {
    if (finished) return
    finished = true
    const summary = input.value.trim()
    input.remove()
    ui.title.hidden = false
    if (!save || summary === '' || summary === session.summary) return
    try {
      const { session: updated } = await api('PATCH', sessionPath(session.id), { summary })
      upsertSession(updated)
      renderHeader()
      tell({ type: 'changed', id: session.id })
    } catch (error) {
      showError(error.error ?? { code: 'NETWORK', message: String(error.message) }, false)
    }
  }
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault()
      void finish(true)
    } else if (event.key === 'Escape') {
      event.preventDefault()
      event.stopPropagation()
      void finish(false)
    }
  })
  input.addEventListener('blur', () => void finish(true))
  ui.title.hidden = true
  ui.title.after(input)
  input.focus()
  input.select()
}

// --- following other tabs -------------------------------------------------------------------

let syncing = false

/**
 * Catches up with what happened elsewhere: the list (new, changed and deleted sessions) and the
 * open session — deleted, or a reply started in another tab (reattached here).
 */
async function sync() {
  if (syncing || document.visibilityState === 'hidden') return
  syncing = true
  try {
    const known = currentSession()
    const before = known ? { state: known.state, lastActivity: known.lastActivity } : undefined
    await loadSessions()
    const id = state.currentId
    if (!id || isWatching(id) || state.submitting) return
    const listed = state.sessions.find((session) => session.id === id)
    const same = (session) =>
      before !== undefined && session.state === before.state && session.lastActivity === before.lastActivity
    // Listed and unchanged (and not running): nothing to do without asking for the messages.
    if (listed && same(listed) && listed.state !== 'active') return
    let detail
    try {
      detail = await api('GET', sessionPath(id))
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) await sessionGone(id)
      return
    }
    if (state.currentId !== id || isWatching(id) || state.submitting) return
    if (!same(detail.session) || detail.running) showDetail(detail)
  } catch {
    // The server is away for a moment: the next round tries again.
  } finally {
    syncing = false
  }
}

channel?.addEventListener('message', (event) => {
  const message = event.data
  if (message?.type === 'deleted' && typeof message.id === 'string') {
    void sessionGone(message.id)
    return
  }
  void sync()
})

// --- sidebar, theme, keyboard ---------------------------------------------------------------

function openSidebar() {
  document.body.classList.add('sidebar-open')
  ui.scrim.hidden = false
}

function closeSidebar() {
  document.body.classList.remove('sidebar-open')
  ui.scrim.hidden = true
}

// --- wiring ---------------------------------------------------------------------------------

setUpTheme()
setUpShortcuts({ createSession, selectSession, stopStreaming, openSidebar, closeSidebar, isNarrow })
onSessionRow(
  (id) => selectSession(id),
  (session) => confirmDelete(session),
)

ui.providerSelect.addEventListener('change', onProviderChange)
ui.newSession.addEventListener('click', createSession)
ui.openSidebar.addEventListener('click', openSidebar)
ui.closeSidebar.addEventListener('click', closeSidebar)
ui.scrim.addEventListener('click', closeSidebar)
ui.composer.addEventListener('submit', (event) => {
  event.preventDefault()
  const text = ui.input.value
  if (text.trim() === '' || ui.send.disabled) return
  void sendContent(text, { text })
})
ui.input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault()
    ui.composer.requestSubmit()
  }
})
ui.input.addEventListener('input', () => {
  ui.input.style.height = 'auto'
  ui.input.style.height = `${Math.min(ui.input.scrollHeight + 2, 200)}px`
})
ui.stop.addEventListener('click', stopStreaming)
ui.retryButton.addEventListener('click', () => void retrySend())
ui.regenerate.addEventListener('click', () => void retrySend())
ui.dismissError.addEventListener('click', hideError)
ui.outputExample.addEventListener('click', () => {
  if (!state.outputExample) return
  ui.sendOutput.value = JSON.stringify(state.outputExample.schema, null, 2)
  ui.sendOutput.dataset.name = state.outputExample.name
})
ui.sendOutput.addEventListener('input', () => {
  if (ui.sendOutput.value.trim() === '') delete ui.sendOutput.dataset.name
})
ui.optionsToggle.addEventListener('click', () => {
  const open = ui.sendOptions.hidden
  ui.sendOptions.hidden = !open
  ui.optionsToggle.setAttribute('aria-expanded', String(open))
})
ui.deleteSession.addEventListener('click', () => {
  const session = currentSession()
  if (session) confirmDelete(session)
})
ui.rename.addEventListener('click', renameSession)
ui.exportLink.addEventListener('click', () => {
  const session = currentSession()
  if (!session) return
  // The server names the file (Content-Disposition: attachment).
  const link = el('a')
  link.href = sessionPath(session.id, '/export')
  link.download = ''
  document.body.append(link)
  link.click()
  link.remove()
})
ui.fork.addEventListener('click', () => void forkSession(undefined))
ui.confirmCancel.addEventListener('click', () => ui.dialog.close())
ui.confirmDelete.addEventListener('click', deleteConfirmed)
ui.shortcutsClose.addEventListener('click', () => ui.shortcuts.close())
let searchTimer = 0
ui.search.addEventListener('input', () => {
  clearTimeout(searchTimer)
  searchTimer = setTimeout(() => {
    state.filters.q = ui.search.value
    state.sessions = []
    void loadSessions().catch(() => undefined)
  }, 200)
})
ui.stateFilter.addEventListener('change', () => {
  clearTimeout(searchTimer)
  state.filters.q = ui.search.value
  state.filters.state = ui.stateFilter.value
  state.sessions = []
  void loadSessions().catch(() => undefined)
})
window.addEventListener('hashchange', () => {
  const id = idFromHash(location.hash)
  if (id !== undefined && id !== state.currentId) void selectSession(id, { fromHash: true })
})
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') void sync()
})
setInterval(() => void sync(), SYNC_INTERVAL_MS)

async function start() {
  if (isNarrow()) ui.newSessionBox.open = false
  try {
    const { providers, storage, outputExample } = await api('GET', '/api/providers')
    state.providers = providers
    state.outputExample = outputExample
    renderProviders()
    ui.storageInfo.replaceChildren(
      el('span', 'storage-kind', storage.kind),
      el('span', 'mono storage-location', storage.location),
    )
    ui.storageInfo.title = storage.location
    await loadSessions()
    // A link to a session opens it even when it is not among the first sessions listed; a malformed
    // hash opens the newest session instead of breaking the page.
    const fromHash = idFromHash(location.hash)
    await selectSession(fromHash ?? state.sessions[0]?.id, { fromHash: fromHash !== undefined })
    document.body.dataset.ready = 'true'
  } catch (error) {
    showError(
      error.error ?? { code: 'NETWORK', message: `Could not reach the playground server: ${error.message}` },
      false,
    )
  }
}

void start()
