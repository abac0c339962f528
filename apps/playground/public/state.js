// The page's shared state: its elements and what it knows (providers, sessions, the open one).
const $ = (id) => document.getElementById(id)

/** The page's elements, by role. */
export const ui = {
  sidebar: $('sidebar'),
  scrim: $('scrim'),
  openSidebar: $('open-sidebar'),
  closeSidebar: $('close-sidebar'),
  newSessionBox: $('new-session-box'),
  providerSelect: $('provider-select'),
  modelInput: $('model-input'),
  modelOptions: $('model-options'),
  systemPrompt: $('system-prompt'),
  providerNote: $('provider-note'),
  newSession: $('new-session'),
  search: $('session-search'),
  stateFilter: $('state-filter'),
  sessionList: $('session-list'),
  sessionCount: $('session-count'),
  storageInfo: $('storage-info'),
  titleBlock: $('title-block'),
  title: $('session-title'),
  meta: $('session-meta'),
  stateBadge: $('state-badge'),
  actions: $('session-actions'),
  rename: $('rename-session'),
  fork: $('fork-session'),
  exportLink: $('export-session'),
  deleteSession: $('delete-session'),
  themeToggle: $('theme-toggle'),
  conversation: $('conversation'),
  announcer: $('announcer'),
  notice: $('notice'),
  noticeText: $('notice-text'),
  regenerate: $('regenerate-button'),
  errorBanner: $('error-banner'),
  errorKind: $('error-kind'),
  errorMessage: $('error-message'),
  retryButton: $('retry-button'),
  dismissError: $('dismiss-error'),
  composerNote: $('composer-note'),
  sendOptions: $('send-options'),
  optionsToggle: $('options-toggle'),
  agentSelect: $('agent-select'),
  sendModel: $('send-model'),
  sendModelOptions: $('send-model-options'),
  sendTemperature: $('send-temperature'),
  sendMaxTokens: $('send-max-tokens'),
  sendOutput: $('send-output'),
  outputExample: $('output-example'),
  composer: $('composer'),
  input: $('message-input'),
  send: $('send-button'),
  stop: $('stop-button'),
  dialog: $('confirm-dialog'),
  confirmSummary: $('confirm-summary'),
  confirmCancel: $('confirm-cancel'),
  confirmDelete: $('confirm-delete'),
  shortcuts: $('shortcuts-dialog'),
  shortcutsClose: $('shortcuts-close'),
}

/** What the page knows. */
export const state = {
  providers: [],
  /** An example output schema `{ name, schema }` (the demo's `/json` sends it). */
  outputExample: undefined,
  sessions: [],
  hasMore: false,
  filters: { q: '', state: '' },
  /** @type {string | undefined} */
  currentId: undefined,
  /** The open session's view when it is not in the loaded list (a deep link, a filtered list). */
  detached: undefined,
  /** The one event stream this tab reads: `{ sessionId, controller, origin: 'send' | 'attach' }`. */
  watch: undefined,
  /** A send request on its way (before the server accepted it). */
  submitting: false,
  /** The error shown for the open session, to retry. */
  shownError: undefined,
  notFound: undefined,
}

export function providerOf(id) {
  return state.providers.find((provider) => provider.id === id)
}

/** The open session's view: from the list, or kept aside when the list does not hold it. */
export function currentSession() {
  return state.sessions.find((session) => session.id === state.currentId) ?? state.detached
}

/** Whether this tab reads the event stream of a session's running send. */
export function isWatching(id = state.currentId) {
  return state.watch !== undefined && state.watch.sessionId === id
}
