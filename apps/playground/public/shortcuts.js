// Keyboard shortcuts (listed in the `?` dialog): Ctrl+K search, Alt+N new session, Alt+↑/↓
// previous/next session, Esc stop or close the drawer, ? help.
import { currentSession, isWatching, state, ui } from './state.js'

function isTyping(target) {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))
  )
}

/**
 * Listens for the shortcuts; `actions` are the app's: createSession, selectSession(id),
 * stopStreaming, openSidebar, closeSidebar, isNarrow.
 */
export function setUpShortcuts(actions) {
  document.addEventListener('keydown', (event) => {
    if (ui.dialog.open || ui.shortcuts.open) return
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
      event.preventDefault()
      if (actions.isNarrow()) actions.openSidebar()
      ui.search.focus()
      ui.search.select()
    } else if (event.altKey && event.key.toLowerCase() === 'n') {
      event.preventDefault()
      void actions.createSession()
    } else if (event.altKey && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) {
      event.preventDefault()
      const index = state.sessions.findIndex((session) => session.id === state.currentId)
      const next = state.sessions[index + (event.key === 'ArrowUp' ? -1 : 1)]
      if (next) void actions.selectSession(next.id)
    } else if (event.key === 'Escape') {
      if (document.body.classList.contains('sidebar-open')) actions.closeSidebar()
      else if (currentSession()?.state === 'active' || isWatching()) void actions.stopStreaming()
    } else if (event.key === '?' && !isTyping(event.target)) {
      event.preventDefault()
      ui.shortcuts.showModal()
    }
  })
}
