// The header of the open session and the messages about it: the error banner (with Retry when
// retrying can help), notices, and what screen readers are told.
import { el, setBadge, tokens } from './dom.js'
import { currentSession, providerOf, state, ui } from './state.js'

export function announce(text) {
  ui.announcer.textContent = ''
  // A new text node each time, so screen readers announce a repeated message too.
  requestAnimationFrame(() => {
    ui.announcer.textContent = text
  })
}

export function renderHeader() {
  const session = currentSession()
  if (!session) {
    ui.title.textContent = 'AgentX Playground'
    ui.meta.textContent = state.notFound ?? 'Create a session to start chatting.'
    ui.stateBadge.hidden = true
    ui.actions.hidden = true
    return
  }
  ui.title.textContent = session.summary || 'New session'
  const provider = providerOf(session.provider)
  ui.meta.replaceChildren(
    el('span', '', provider?.label ?? session.provider),
    el('span', 'dot', '·'),
    el('span', 'mono', session.model),
    el('span', 'dot', '·'),
    el('span', '', tokens(session.tokenUsage)),
  )
  if (session.activeAgent && session.activeAgent !== 'default')
    ui.meta.append(el('span', 'dot', '·'), el('span', '', `agent: ${session.activeAgent}`))
  if (!session.canSend && !session.parentSessionId)
    ui.meta.append(el('span', 'dot', '·'), el('span', 'warn', 'provider not configured: read only'))
  setBadge(ui.stateBadge, session.state)
  ui.stateBadge.hidden = false
  ui.actions.hidden = false
  ui.rename.hidden = Boolean(session.parentSessionId)
  ui.fork.hidden = !session.canSend || Boolean(session.parentSessionId)
}

export function showError(error, canRetry) {
  state.shownError = error
  ui.errorKind.textContent = error.kind ?? error.code ?? 'error'
  ui.errorMessage.textContent = error.message ?? 'Something went wrong.'
  ui.errorBanner.dataset.kind = error.kind ?? error.code ?? 'error'
  ui.retryButton.hidden = !canRetry
  ui.errorBanner.hidden = false
}

export function hideError() {
  state.shownError = undefined
  ui.errorBanner.hidden = true
}

export function showNotice(text, { regenerate = false } = {}) {
  ui.noticeText.textContent = text
  ui.regenerate.hidden = !regenerate
  ui.notice.hidden = false
}

export function hideNotice() {
  ui.notice.hidden = true
}

/** The banner or notice that explains the open session's state after a (re)load. */
export function explainState(session, lastError) {
  hideError()
  hideNotice()
  if (session.state === 'error' && lastError) showError(lastError, lastError.retryable && session.canSend)
  else if (session.state === 'error')
    showError({ code: 'error', message: 'The last reply failed.' }, session.canSend)
  else if (session.state === 'aborted' && lastError?.code === 'SERVER_STOPPED')
    showNotice('The server stopped while this reply was streaming; the partial reply was kept.', {
      regenerate: session.canSend,
    })
  else if (session.state === 'aborted')
    showNotice('Stopped. The partial reply was kept; send a new message, or regenerate it.', {
      regenerate: session.canSend,
    })
  else if (session.state === 'interrupted')
    showNotice(
      'This reply was interrupted (the server stopped or crashed); regenerate it or send a new message.',
      {
        regenerate: session.canSend,
      },
    )
}
