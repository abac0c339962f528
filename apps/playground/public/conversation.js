// The conversation pane: stored messages, and the live events of a running send applied on top of
// them (deltas, tool calls and results, approvals, handoffs, sub-agents, compaction markers, the
// trace). Everything model-made is rendered as text nodes or through markdown.js.
import { button, el, formatJson, resultText, textOf, tokens } from './dom.js'
import { renderMarkdown } from './markdown.js'
import { Trace } from './trace.js'

/**
 * @typedef {object} ConversationHooks
 * @property {(answers: object[]) => void} onAnswer  sends the answers to pending tool calls
 * @property {(seq: number) => void} onFork  forks the session through a message
 * @property {(seq: number, text: string) => void} onEdit  edit and resend a user message, as a fork
 */

export class Conversation {
  /** @param {HTMLElement} root @param {ConversationHooks} hooks */
  constructor(root, hooks) {
    this.root = root
    this.hooks = hooks
    this.session = undefined
    this.agentTools = new Set()
    /** Structured outputs seen on this page, by the id of the reply they were parsed from. */
    this.outputs = new Map()
    this.namesAgents = false
    this.toolCards = new Map()
    this.live = undefined
    this.lastAgentName = undefined
    this.trace = undefined
    this.pendingPanel = undefined
  }

  /** Renders a session's stored messages (a snapshot); `running` skips the checkpoint of the reply in flight. */
  reset(session, messages, { agentTools = [], agents = [], running = false } = {}) {
    this.session = session
    this.agentTools = new Set(agentTools)
    // Replies name their profile only where there are several (another provider's has just one).
    this.namesAgents = agents.length > 0
    this.toolCards = new Map()
    this.live = undefined
    this.lastAgentName = undefined
    this.trace = undefined
    this.pendingPanel = undefined
    this.root.replaceChildren()
    if (session.parentSessionId) {
      const note = el('div', 'child-note')
      note.dataset.testid = 'child-note'
      note.append(`A sub-agent’s child session (${session.activeAgent ?? 'agent'}), read only. `)
      const link = el('a', '', 'Open the parent session')
      link.href = `#${encodeURIComponent(session.parentSessionId)}`
      link.dataset.testid = 'parent-link'
      note.append(link)
      this.root.append(note)
    }
    if (session.forkedFrom) {
      const note = el('div', 'fork-note')
      note.dataset.testid = 'fork-note'
      note.append(`Forked from another session, with its messages up to #${session.forkedFrom.seq}. `)
      const link = el('a', '', 'Open the original')
      link.href = `#${encodeURIComponent(session.forkedFrom.sessionId)}`
      link.dataset.testid = 'fork-source-link'
      note.append(link)
      this.root.append(note)
    }
    if (session.systemPrompt) {
      const details = el('details', 'system-prompt')
      details.dataset.testid = 'session-system-prompt'
      details.append(
        el('summary', '', 'System prompt'),
        el('div', 'system-prompt-text', session.systemPrompt),
      )
      this.root.append(details)
    }
    let shown = messages
    // The reply being streamed right now may have a checkpoint in storage: the live events rebuild it.
    const last = shown.at(-1)
    if (running && last?.type === 'agent' && last.incomplete && last.stopReason === undefined)
      shown = shown.slice(0, -1)
    if (shown.length === 0) {
      this.root.append(el('div', 'conversation-hint', 'No messages yet. Say hello — or try /help.'))
      return
    }
    for (const message of shown) this.addMessage(message)
    // A tool call whose reply was stopped or failed never got a result.
    for (const card of this.toolCards.values()) {
      if (!card.querySelector('.tool-result') && !running)
        card.querySelector('.tool-status').textContent = 'no result'
    }
    this.labelCutReply()
    this.scroll(true)
  }

  /** A reply cut by a server stop says so, rather than "stopped" (which means the user pressed Stop). */
  labelCutReply() {
    if (this.session?.lastError?.code !== 'SERVER_STOPPED') return
    const tags = this.root.querySelectorAll('[data-testid="incomplete-tag"]')
    const tag = tags[tags.length - 1]
    if (tag) tag.textContent = 'cut short — the server stopped while it was streaming'
  }

  clearHint() {
    this.root.querySelector('.welcome, .conversation-hint')?.remove()
  }

  /** Appends one stored message (skipping one already shown). */
  addMessage(message) {
    if (message.id && this.root.querySelector(`[data-message-id="${CSS.escape(message.id)}"]`)) {
      if (message.type === 'agent') this.replaceAgent(message)
      return
    }
    if (message.type === 'user') {
      if (Array.isArray(message.content) && message.content.every((block) => block.type === 'tool_result')) {
        this.attachToolResults(message.content)
        return
      }
      this.root.append(this.userBubble(textOf(message.content), message))
    } else if (message.type === 'agent') {
      this.agentMarker(message.agentName)
      this.root.append(this.agentBubble(message))
    } else if (message.type === 'tool') {
      this.attachToolResults(message.content)
    } else if (message.type === 'system') {
      this.root.append(this.systemNote(message))
    }
  }

  replaceAgent(message) {
    const existing = this.root.querySelector(`[data-message-id="${CSS.escape(message.id)}"]`)
    if (existing?.view) fillAgentBubble(this, existing.view, message)
  }

  /** A marker when another profile answers than the one before (a handoff, or a send that picked one). */
  agentMarker(agentName, from) {
    if (agentName === undefined || !this.namesAgents) return
    const previous = from ?? this.lastAgentName
    this.lastAgentName = agentName
    if (previous === undefined || previous === agentName) return
    const marker = el('div', 'agent-marker')
    marker.dataset.testid = 'handoff-marker'
    marker.append(
      el('span', 'agent-marker-line'),
      el('span', 'agent-marker-text', `${previous} → ${agentName}`),
    )
    marker.append(el('span', 'agent-marker-line'))
    this.root.append(marker)
  }

  userBubble(text, message) {
    const row = el('div', 'message user')
    row.dataset.testid = 'user-message'
    if (message) {
      row.dataset.messageId = message.id
      row.dataset.seq = String(message.seq)
    }
    const bubble = el('div', 'bubble', text)
    row.append(bubble)
    if (message) row.append(this.messageActions(message, text))
    return row
  }

  /** Fork from here (any message) and Edit (a user message: edited, it is sent in a fork). */
  messageActions(message, text) {
    const actions = el('div', 'message-actions')
    if (!this.session?.canSend || this.session.parentSessionId) return actions
    const fork = button('Fork from here', 'link-button', 'fork-here', () => this.hooks.onFork(message.seq))
    fork.title = 'Open a new session with the conversation up to this message'
    actions.append(fork)
    if (message.type === 'user') {
      actions.append(
        button('Edit', 'link-button', 'edit-message', () =>
          this.editMessage(actions.closest('.message'), message, text),
        ),
      )
    }
    return actions
  }

  /**
   * Edits a user message in place. The edited text is sent in a fork of the session made just
   * before that message, so the original conversation stays as it was.
   */
  editMessage(row, message, text) {
    if (!row) return
    const existing = row.querySelector('.message-editor textarea')
    if (existing) return existing.focus()
    const shown = [...row.children]
    const form = el('form', 'message-editor')
    form.dataset.testid = 'message-editor'
    const editor = el('textarea')
    editor.value = text
    editor.rows = Math.min(Math.max(text.split('\n').length, 2), 10)
    editor.setAttribute('aria-label', 'Edited message')
    editor.dataset.testid = 'edit-input'
    const hint = el(
      'p',
      'message-editor-hint',
      'Sent in a new session forked just before this message; this one stays as it is.',
    )
    const submit = el('button', 'button primary small', 'Send as a fork')
    submit.type = 'submit'
    submit.dataset.testid = 'edit-send'
    const cancel = button('Cancel', 'button ghost small', 'edit-cancel', () => close())
    const buttons = el('div', 'message-editor-buttons')
    buttons.append(cancel, submit)
    form.append(editor, hint, buttons)
    const close = () => {
      form.remove()
      for (const child of shown) child.hidden = false
    }
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      const edited = editor.value
      if (edited.trim() === '') return editor.focus()
      close()
      this.hooks.onEdit(message.seq, edited)
    })
    editor.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault()
        form.requestSubmit()
      } else if (event.key === 'Escape') {
        // Cancels the edit only (Esc elsewhere stops a running reply).
        event.preventDefault()
        event.stopPropagation()
        close()
      }
    })
    for (const child of shown) child.hidden = true
    row.append(form)
    editor.focus()
    editor.setSelectionRange(editor.value.length, editor.value.length)
  }

  systemNote(message) {
    if (message.compaction) {
      const details = el('details', 'compaction-marker')
      details.dataset.testid = 'compaction-marker'
      details.dataset.messageId = message.id
      details.append(
        el('summary', '', `Earlier messages summarised (through #${message.compaction.throughSeq})`),
        el('div', 'compaction-text', textOf(message.content)),
      )
      return details
    }
    const note = el('div', 'system-note', textOf(message.content))
    note.dataset.messageId = message.id
    return note
  }

  /** An agent reply; `message` is a stored message, or undefined for a live (streaming) one. */
  agentBubble(message) {
    const row = el('div', 'message agent')
    row.dataset.testid = 'agent-message'
    const avatar = el('div', 'avatar', 'AI')
    const body = el('div', 'agent-body')
    row.append(avatar, body)
    row.view = newView(row, body)
    if (message) fillAgentBubble(this, row.view, message)
    else row.classList.add('streaming')
    return row
  }

  liveView() {
    if (!this.live) {
      this.clearHint()
      this.live = this.agentBubble(undefined)
      if (this.liveAgent) this.live.view.agentName = this.liveAgent
    }
    if (!this.live.isConnected) this.root.append(this.live)
    return this.live.view
  }

  toolCard(id, name, input) {
    const existing = this.toolCards.get(id)
    if (existing) return existing
    const card = el('div', 'tool-card')
    card.dataset.testid = 'tool-card'
    card.dataset.toolUseId = id
    const head = el('div', 'tool-head')
    const handoff = name.startsWith('transfer_to_')
    head.append(
      el('span', 'tool-icon', handoff ? '⇄' : 'ƒ'),
      el('span', 'tool-name', name),
      el('span', 'tool-status', 'running…'),
    )
    card.append(head)
    if (!handoff) card.append(el('pre', 'tool-input', formatJson(input)))
    if (this.agentTools.has(name) && this.session) {
      const panel = el('div', 'subagent-panel')
      panel.dataset.testid = 'subagent-panel'
      const head2 = el('div', 'subagent-head')
      head2.append(el('span', 'tag', 'sub-agent'), ` ${name} works in a child session `)
      const link = el('a', 'subagent-link', 'open')
      link.href = `#${encodeURIComponent(`${this.session.id}/${id}`)}`
      link.dataset.testid = 'child-link'
      head2.append(link)
      panel.append(head2, el('div', 'subagent-text'))
      card.append(panel)
    }
    this.toolCards.set(id, card)
    return card
  }

  setToolResult(toolUseId, content, isError) {
    const card = this.toolCards.get(toolUseId)
    if (!card) return
    card.querySelector('.tool-status').textContent = isError ? 'failed' : 'done'
    card.classList.toggle('failed', Boolean(isError))
    card.querySelector('.tool-result')?.remove()
    const result = el('pre', 'tool-result', resultText(content))
    result.dataset.testid = 'tool-result'
    card.append(result)
  }

  attachToolResults(content) {
    if (!Array.isArray(content)) return
    for (const block of content)
      if (block.type === 'tool_result') this.setToolResult(block.toolUseId, block.content, block.isError)
  }

  /** The trace of the send being watched (created by its first step). */
  traceFor() {
    if (!this.trace) {
      this.trace = new Trace({ joined: this.replayed })
      this.root.append(this.trace.element)
    }
    return this.trace
  }

  /** Moves the trace (and the pending panel) below everything the run added so far. */
  keepAtEnd() {
    // Moving a node blurs what has the focus inside it: the pending panel's answer field keeps it.
    const focused = this.pendingPanel?.contains(document.activeElement) ? document.activeElement : undefined
    if (this.trace?.element.isConnected) this.root.append(this.trace.element)
    if (this.pendingPanel?.isConnected) this.root.append(this.pendingPanel)
    if (focused !== undefined && document.activeElement !== focused) focused.focus({ preventScroll: true })
  }

  /** Starts watching a run: a new trace; `replayed` when it was joined midway (its timings start late). */
  beginRun({ replayed = false } = {}) {
    this.trace = undefined
    this.live = undefined
    this.pendingPanel?.remove()
    this.pendingPanel = undefined
    this.replayed = replayed
    // Who started a joined run, and with which output schema, is not known here.
    if (replayed) this.outputName = undefined
  }

  /** Applies one live session event. Returns nothing; the app handles state, errors and notices. */
  apply(type, event) {
    const now = performance.now()
    switch (type) {
      case 'step-start':
        this.traceFor().stepStart(event, now)
        this.liveAgent = event.agent
        break
      case 'step-finish':
        this.trace?.stepFinish(event, now)
        break
      case 'text-delta':
        this.trace?.firstToken(now)
        appendText(this, this.liveView(), event.text)
        break
      case 'thinking-delta':
        this.trace?.firstToken(now)
        appendThinking(this.liveView(), event.text, true)
        break
      case 'tool-call': {
        this.trace?.firstToken(now)
        const view = this.liveView()
        view.body.append(this.toolCard(event.id, event.name, event.input))
        break
      }
      case 'tool-result':
        this.trace?.toolResult(event, now)
        this.setToolResult(event.toolUseId, event.content, event.isError)
        break
      case 'message':
        this.applyMessage(event.message)
        break
      case 'compaction':
        this.addMessage(event.message)
        break
      case 'handoff':
        this.trace?.note(`handoff ${event.from} → ${event.to}`)
        this.agentMarker(event.to, event.from)
        this.liveAgent = event.to
        break
      case 'subagent':
        this.applySubagent(event)
        break
      case 'retry':
        this.trace?.retry(event)
        break
      case 'input-required':
        this.showPending(event.pending)
        break
      case 'done':
      case 'error':
        this.trace?.finish(now, type === 'error' ? event.error : undefined)
        this.finishLive()
        if (type === 'done' && event.result && 'output' in event.result)
          this.showStructuredOutput(event.result.output)
        break
      case 'state':
        if (event.state === 'aborted') {
          this.trace?.finish(now, { code: 'aborted' })
          this.finishLive()
        }
        break
      default:
        break
    }
    this.keepAtEnd()
    this.scroll(false)
  }

  applyMessage(message) {
    if (message.type === 'agent') {
      const stale = this.root.querySelector(`[data-message-id="${CSS.escape(message.id)}"]`)
      if (this.live) {
        const view = this.live.view
        if (view.frame) cancelAnimationFrame(view.frame)
        view.frame = 0
        if (stale && stale !== this.live) stale.remove()
        if (this.namesAgents && message.agentName !== undefined && message.agentName !== this.lastAgentName) {
          this.live.before(this.markerFor(message.agentName))
        }
        fillAgentBubble(this, view, message)
        this.live = undefined
      } else if (stale?.view) {
        fillAgentBubble(this, stale.view, message)
      } else {
        this.addMessage(message)
      }
      this.trace?.message(message)
      return
    }
    if (message.type === 'user') {
      const optimistic = this.root.querySelector('.message.user[data-optimistic]')
      if (optimistic) {
        delete optimistic.dataset.optimistic
        optimistic.dataset.messageId = message.id
        optimistic.dataset.seq = String(message.seq)
        optimistic.append(this.messageActions(message, textOf(message.content)))
        return
      }
    }
    this.addMessage(message)
  }

  /**
   * The parsed structured output of a send (`SendResult.output`, DESIGN §10.5), under the reply it
   * was parsed from: the kernel checked it against the schema, so it is shown field by field. It is
   * kept by message id, so the reply keeps it when the conversation is drawn again (another tab's
   * change, a refresh after the run); the kernel does not store it, so a reload shows the JSON only.
   */
  showStructuredOutput(value) {
    const replies = this.root.querySelectorAll('.message.agent')
    const reply = replies[replies.length - 1]
    if (!reply?.view) return
    const entry = { value, name: this.outputName }
    if (reply.dataset.messageId) this.outputs.set(reply.dataset.messageId, entry)
    placeOutputPanel(reply.view, entry)
  }

  /** The marker element for a profile change seen on a finished reply (no handoff event came first). */
  markerFor(agentName) {
    const fragment = document.createDocumentFragment()
    const previous = this.lastAgentName
    this.lastAgentName = agentName
    if (previous === undefined) return fragment
    const marker = el('div', 'agent-marker')
    marker.dataset.testid = 'handoff-marker'
    marker.append(
      el('span', 'agent-marker-line'),
      el('span', 'agent-marker-text', `${previous} → ${agentName}`),
    )
    marker.append(el('span', 'agent-marker-line'))
    fragment.append(marker)
    return fragment
  }

  applySubagent(event) {
    const toolUseId =
      this.session && event.sessionId.startsWith(`${this.session.id}/`)
        ? event.sessionId.slice(this.session.id.length + 1)
        : undefined
    const card = toolUseId === undefined ? undefined : this.toolCards.get(toolUseId)
    const panel = card?.querySelector('.subagent-panel')
    if (!panel) return
    panel.classList.add('active')
    const inner = event.event
    if (inner.type === 'text-delta') {
      const text = panel.querySelector('.subagent-text')
      text.textContent += inner.text
    } else if (inner.type === 'state') {
      panel.dataset.state = inner.state
    }
    this.trace?.subagent(event)
  }

  finishLive() {
    if (!this.live) return
    const view = this.live.view
    if (view.frame) cancelAnimationFrame(view.frame)
    view.frame = 0
    if (view.textValue === '' && view.thinkingText === '' && view.body.childElementCount === 0)
      this.live.remove()
    else {
      renderText(view, true)
      this.live.classList.remove('streaming')
    }
    this.live = undefined
  }

  /**
   * The calls the session waits on (DESIGN §10.1), as cards at the end of the conversation:
   * Approve / Deny (with a reason, and the input editable) for approvals, a text field for client
   * tools. The answers go out together once every call has one.
   */
  showPending(pending) {
    this.pendingPanel?.remove()
    if (!pending || pending.length === 0) {
      this.pendingPanel = undefined
      return
    }
    const panel = el('section', 'pending-panel')
    panel.dataset.testid = 'pending-panel'
    panel.append(
      el('h3', '', pending.length === 1 ? 'Waiting for you' : `Waiting for you (${pending.length} calls)`),
    )
    const answers = new Map()
    const submitIfComplete = () => {
      if (answers.size === pending.length)
        this.hooks.onAnswer(pending.map((call) => answers.get(call.toolUseId)))
    }
    for (const call of pending) panel.append(this.pendingCard(call, answers, submitIfComplete))
    this.pendingPanel = panel
    this.root.append(panel)
    this.scroll(true)
    panel.querySelector('input, button')?.focus({ preventScroll: true })
  }

  pendingCard(call, answers, submitIfComplete) {
    const card = el('div', `pending-card ${call.kind}`)
    card.dataset.testid = 'pending-card'
    card.dataset.kind = call.kind
    card.dataset.toolUseId = call.toolUseId
    const status = el('span', 'pending-status', call.kind === 'approval' ? 'needs approval' : 'question')
    const done = (label, answer) => {
      answers.set(call.toolUseId, answer)
      status.textContent = label
      card.classList.add('answered')
      for (const control of card.querySelectorAll('button, input, textarea')) control.disabled = true
      submitIfComplete()
    }
    if (call.kind === 'client') {
      const question = typeof call.input?.question === 'string' ? call.input.question : formatJson(call.input)
      const head = el('div', 'pending-head')
      head.append(el('span', 'tool-name', call.name), status)
      const form = el('form', 'pending-form')
      const input = el('input')
      input.type = 'text'
      input.placeholder = 'Your answer'
      input.setAttribute('aria-label', question)
      input.dataset.testid = 'pending-answer'
      const submit = el('button', 'button primary', 'Answer')
      submit.type = 'submit'
      submit.dataset.testid = 'pending-submit'
      form.append(input, submit)
      form.addEventListener('submit', (event) => {
        event.preventDefault()
        if (input.value.trim() === '') return input.focus()
        done('answered', { type: 'tool_result', toolUseId: call.toolUseId, content: input.value })
      })
      card.append(head, el('p', 'pending-question', question), form)
      return card
    }
    const head = el('div', 'pending-head')
    head.append(el('span', 'tool-name', call.name), status)
    const inputBlock = el('pre', 'tool-input', formatJson(call.input))
    const edit = el('details', 'pending-edit')
    const editor = el('textarea')
    editor.rows = 4
    editor.value = formatJson(call.input)
    editor.dataset.testid = 'pending-input-editor'
    editor.setAttribute('aria-label', 'Input to run the tool with')
    edit.append(el('summary', '', 'Edit input'), editor)
    const reason = el('input')
    reason.type = 'text'
    reason.placeholder = 'Reason (optional, told to the model when you deny)'
    reason.dataset.testid = 'pending-reason'
    const error = el('div', 'pending-error')
    const buttons = el('div', 'pending-buttons')
    buttons.append(
      button('Approve', 'button primary', 'approve', () => {
        const answer = { type: 'tool_approval', toolUseId: call.toolUseId, approved: true }
        if (edit.open && editor.value.trim() !== formatJson(call.input).trim()) {
          try {
            answer.input = JSON.parse(editor.value)
          } catch {
            error.textContent = 'The edited input is not valid JSON.'
            return
          }
        }
        done('approved', answer)
      }),
      button('Deny', 'button ghost danger', 'deny', () => {
        const answer = { type: 'tool_approval', toolUseId: call.toolUseId, approved: false }
        if (reason.value.trim() !== '') answer.reason = reason.value.trim()
        done('denied', answer)
      }),
    )
    card.append(head, inputBlock, edit, reason, error, buttons)
    return card
  }

  scroll(force) {
    const c = this.root
    if (force || c.scrollHeight - c.scrollTop - c.clientHeight < 160) c.scrollTop = c.scrollHeight
  }
}

function newView(row, body) {
  return {
    row,
    body,
    thinking: undefined,
    thinkingText: '',
    text: undefined,
    textValue: '',
    frame: 0,
    // Incremental Markdown: blocks before `boundary` are rendered once; only the tail is redrawn.
    stable: undefined,
    tail: undefined,
    boundary: 0,
    rendered: 0,
    scanned: 0,
    /** The fence (```, ~~~) of a code block still open, if any. */
    fence: undefined,
    /** Where a block may end: after a blank line, once the next line shows it is not a continuation. */
    candidate: undefined,
    agentName: undefined,
  }
}

function fillAgentBubble(conversation, view, message) {
  view.body.replaceChildren()
  Object.assign(view, newView(view.row, view.body))
  view.row.classList.remove('streaming')
  view.row.dataset.messageId = message.id
  view.row.dataset.seq = String(message.seq)
  // The default profile goes unnamed; another profile's replies say who wrote them.
  if (conversation.namesAgents && message.agentName !== undefined && message.agentName !== 'default') {
    const tag = el('div', 'agent-name', message.agentName)
    tag.dataset.testid = 'agent-name'
    view.body.append(tag)
  }
  const content =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content
  for (const block of content) {
    if (block.type === 'thinking') appendThinking(view, block.text, false)
    else if (block.type === 'text') {
      view.textValue += block.text
      renderText(view, true)
    } else if (block.type === 'tool_use') {
      view.body.append(conversation.toolCard(block.id, block.name, block.input))
    }
  }
  const json = structuredOutputOf(view.textValue)
  if (json !== undefined) {
    const tag = el('div', 'json-tag', 'structured output (JSON)')
    tag.dataset.testid = 'json-output'
    view.body.append(tag)
  }
  if (message.incomplete) {
    const label =
      message.stopReason === 'aborted'
        ? 'stopped — partial reply kept'
        : message.stopReason === 'error'
          ? 'incomplete — the reply failed half way'
          : 'incomplete — the reply was cut short'
    const tag = el('div', 'incomplete-tag', label)
    tag.dataset.testid = 'incomplete-tag'
    view.body.append(tag)
  }
  const footer = el('div', 'message-footer')
  if (message.usage) footer.append(el('span', 'usage-line', tokens(message.usage)))
  footer.append(conversation.messageActions(message, textOf(message.content)))
  view.body.append(footer)
  const output = conversation.outputs.get(message.id)
  if (output) placeOutputPanel(view, output)
}

/** Puts the structured output panel of `entry` into a reply, in place of the plain JSON tag. */
function placeOutputPanel(view, entry) {
  view.body.querySelector('.structured-output')?.remove()
  // The panel says more than the tag a stored JSON reply gets (after a reload it is all there is).
  view.body.querySelector('[data-testid="json-output"]')?.remove()
  const panel = el('section', 'structured-output')
  panel.dataset.testid = 'structured-output'
  const head = el('div', 'structured-output-head', 'Structured output')
  if (entry.name) head.append(el('span', 'mono', entry.name))
  head.append(el('span', 'tag live', '✓ matches the schema'))
  panel.append(head)
  const value = entry.value
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const fields = el('dl')
    for (const [key, field] of Object.entries(value)) {
      const description = el(
        'dd',
        '',
        typeof field === 'string'
          ? field
          : Array.isArray(field) && field.every((item) => typeof item === 'string')
            ? field.join(', ')
            : JSON.stringify(field),
      )
      description.dataset.field = key
      fields.append(el('dt', '', key), description)
    }
    panel.append(fields)
  } else {
    panel.append(el('pre', 'tool-result', formatJson(value)))
  }
  const footer = view.body.querySelector('.message-footer')
  if (footer) footer.before(panel)
  else view.body.append(panel)
}

/** The value of a reply that is one JSON object or array (structured output), else undefined. */
function structuredOutputOf(text) {
  const trimmed = text.trim()
  if (!/^[[{]/.test(trimmed)) return undefined
  try {
    return JSON.parse(trimmed)
  } catch {
    return undefined
  }
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

function appendText(conversation, view, text) {
  view.textValue += text
  // Re-render at most once a frame while tokens stream in.
  if (!view.frame) {
    view.frame = requestAnimationFrame(() => {
      view.frame = 0
      renderText(view, false)
      conversation.scroll(false)
    })
  }
}

/**
 * Renders the reply's Markdown incrementally: blocks that ended are rendered once and kept; only
 * the unfinished tail is redrawn (at most once a frame). A block ends at a closed code fence, or at
 * a blank line followed by a line that is not indented (an indented one may continue a list item).
 * `final` renders the whole reply once more as one document, so what spans blocks (a loose list,
 * a reference link) comes out right.
 */
function renderText(view, final) {
  if (!view.text) {
    view.text = el('div', 'markdown')
    view.text.dataset.testid = 'agent-text'
    view.stable = el('div', 'markdown-stable')
    view.tail = el('div', 'markdown-tail')
    view.text.append(view.stable, view.tail)
    view.body.append(view.text)
  }
  const text = view.textValue
  if (final) {
    // A reply that is one JSON value (structured output) reads best as a JSON code block.
    const json = structuredOutputOf(text) === undefined ? text : `\`\`\`json\n${text.trim()}\n\`\`\``
    view.stable.replaceChildren(renderMarkdown(json))
    view.tail.replaceChildren()
    view.boundary = view.rendered = view.scanned = text.length
    return
  }
  for (
    let newline = text.indexOf('\n', view.scanned);
    newline !== -1;
    newline = text.indexOf('\n', view.scanned)
  ) {
    scanLine(view, text.slice(view.scanned, newline), newline + 1)
    view.scanned = newline + 1
  }
  if (view.boundary > view.rendered) {
    view.stable.append(renderMarkdown(text.slice(view.rendered, view.boundary)))
    view.rendered = view.boundary
  }
  view.tail.replaceChildren(renderMarkdown(text.slice(view.rendered)))
}

/** Moves the block boundary past one complete line (`next` is where the line after it starts). */
function scanLine(view, line, next) {
  const trimmed = line.trim()
  if (view.fence !== undefined) {
    if (trimmed.length >= view.fence.length && trimmed[0] === view.fence[0] && /^(`+|~+)$/.test(trimmed)) {
      view.fence = undefined
      view.boundary = next
    }
    return
  }
  if (trimmed === '') {
    view.candidate = next
    return
  }
  if (view.candidate !== undefined && !/^\s/.test(line)) view.boundary = view.candidate
  view.candidate = undefined
  const fence = /^\s*(`{3,}|~{3,})/.exec(line)
  if (fence) view.fence = fence[1]
}
