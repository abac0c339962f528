// The colour theme: the system's (auto), dark or light, remembered in localStorage.
import { ui } from './state.js'

const THEMES = ['auto', 'dark', 'light']

function applyTheme(theme) {
  if (theme === 'auto') delete document.documentElement.dataset.theme
  else document.documentElement.dataset.theme = theme
  ui.themeToggle.title = `Theme: ${theme} (click to change)`
  ui.themeToggle.dataset.theme = theme
}

function storedTheme() {
  try {
    const theme = localStorage.getItem('agentx-theme')
    return THEMES.includes(theme) ? theme : 'auto'
  } catch {
    return 'auto'
  }
}

/** Wires the theme button and applies the remembered theme. */
export function setUpTheme() {
  ui.themeToggle.addEventListener('click', () => {
    const next = THEMES[(THEMES.indexOf(storedTheme()) + 1) % THEMES.length]
    try {
      if (next === 'auto') localStorage.removeItem('agentx-theme')
      else localStorage.setItem('agentx-theme', next)
    } catch {
      // Storage refused (private mode): the theme holds for this page only.
    }
    applyTheme(next)
  })
  applyTheme(storedTheme())
}
