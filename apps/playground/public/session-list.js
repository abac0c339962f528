// The session list of the sidebar: pages, search and state filter, one row per session.
import { api } from './api.js'
import { button, el, numberFormat, setBadge, timeAgo } from './dom.js'
import { providerOf, state, ui } from './state.js'

const PAGE_SIZE = 50

/** What a row does: open its session, or ask to delete it. Set once by the app. */
const actions = { select: (_id) => undefined, remove: (_session) => undefined }

/** Connects the rows to the app. */
export function onSessionRow(select, remove) {
  actions.select = select
  actions.remove = remove
}

function listQuery(limit, offset = 0) {
  const parameters = new URLSearchParams({ limit: String(limit) })
  if (offset > 0) parameters.set('offset', String(offset))
  if (state.filters.q.trim() !== '') parameters.set('q', state.filters.q.trim())
  if (state.filters.state !== '') parameters.set('state', state.filters.state)
  return `/api/sessions?${parameters}`
}

/** Reloads the list, keeping as many rows as are shown (at least one page). */
export async function loadSessions() {
  const limit = Math.max(PAGE_SIZE, Math.ceil(state.sessions.length / PAGE_SIZE) * PAGE_SIZE)
  const { sessions } = await api('GET', listQuery(limit))
  const hasMore = sessions.length === limit
  const changed = hasMore !== state.hasMore || JSON.stringify(sessions) !== JSON.stringify(state.sessions)
  state.sessions = sessions
  state.hasMore = hasMore
  if (state.detached && sessions.some((session) => session.id === state.detached.id))
    state.detached = undefined
  // Unchanged (most polls): keep the rows as they are, and the focus and hover on them.
  if (changed || ui.sessionList.dataset.renderedFor !== (state.currentId ?? '')) renderSessionList()
}

export async function loadMoreSessions() {
  const { sessions } = await api('GET', listQuery(PAGE_SIZE, state.sessions.length))
  const known = new Set(state.sessions.map((session) => session.id))
  state.sessions.push(...sessions.filter((session) => !known.has(session.id)))
  state.hasMore = sessions.length === PAGE_SIZE
  renderSessionList()
}

export function renderSessionList() {
  ui.sessionList.dataset.renderedFor = state.currentId ?? ''
  const filtered = state.filters.q.trim() !== '' || state.filters.state !== ''
  ui.sessionCount.textContent = `${state.sessions.length}${state.hasMore ? '+' : ''}`
  if (state.sessions.length === 0) {
    ui.sessionList.replaceChildren(
      el('li', 'empty-list', filtered ? 'No session matches.' : 'No sessions yet. Create one above.'),
    )
  } else {
    ui.sessionList.replaceChildren(...state.sessions.map(sessionItem))
  }
  if (state.hasMore) {
    const item = el('li')
    item.append(
      button(
        'Load older sessions',
        'load-more',
        'load-more',
        () => void loadMoreSessions().catch(() => undefined),
      ),
    )
    ui.sessionList.append(item)
  }
}

function sessionItem(session) {
  const item = el('li', `session-item${session.id === state.currentId ? ' selected' : ''}`)
  item.dataset.id = session.id
  item.dataset.testid = 'session-item'
  const open = el('button', 'session-open')
  open.type = 'button'
  open.addEventListener('click', () => void actions.select(session.id))
  if (session.id === state.currentId) open.setAttribute('aria-current', 'true')
  const summary = el('div', 'session-summary', session.summary || 'New session')
  summary.dataset.testid = 'session-summary'
  const line = el('div', 'session-line')
  const provider = providerOf(session.provider)
  line.append(
    el('span', `tag${provider?.offline ? ' offline' : ''}`, provider?.offline ? 'demo' : session.provider),
  )
  if (session.forkedFrom) line.append(el('span', 'tag fork', 'fork'))
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
  const remove = button('×', 'icon-button', 'session-delete', () => actions.remove(session))
  remove.title = 'Delete session'
  remove.setAttribute('aria-label', 'Delete session')
  item.append(open, remove)
  return item
}

export function upsertSession(session) {
  if (state.detached?.id === session.id) {
    state.detached = session
  }
  const index = state.sessions.findIndex((candidate) => candidate.id === session.id)
  if (index === -1) {
    if (state.detached?.id === session.id) return renderSessionList()
    state.sessions.unshift(session)
  } else state.sessions[index] = session
  state.sessions.sort((a, b) =>
    a.lastActivity < b.lastActivity ? 1 : a.lastActivity > b.lastActivity ? -1 : 0,
  )
  renderSessionList()
}
