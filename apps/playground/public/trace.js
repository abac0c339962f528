// The trace of one send, built from its events (DESIGN §10.8 step-start / step-finish, tool
// results, retries, handoffs, sub-agents): steps with their profile, model, duration, time to first
// token, tokens and stop reason; tools with their durations; retries; the total.
import { duration, el, numberFormat } from './dom.js'

export class Trace {
  /** @param {{ joined?: boolean }} [options] joined: watching began midway (a reload, another tab), so timings start late */
  constructor({ joined = false } = {}) {
    this.joined = joined
    this.startedAt = performance.now()
    this.firstTokenAt = undefined
    this.endedAt = undefined
    this.steps = []
    this.tools = new Map()
    this.notes = []
    this.retries = 0
    this.outcome = undefined
    this.element = el('details', 'trace')
    this.element.dataset.testid = 'trace'
    this.summary = el('summary', 'trace-summary')
    this.body = el('div', 'trace-body')
    this.element.append(this.summary, this.body)
    this.render()
  }

  stepStart(event, now) {
    this.steps.push({ step: event.step, agent: event.agent, model: event.model, start: now })
    this.render()
  }

  firstToken(now) {
    const step = this.steps.at(-1)
    if (step && step.firstTokenAt === undefined) step.firstTokenAt = now
    if (this.firstTokenAt === undefined) this.firstTokenAt = now
  }

  stepFinish(event, now) {
    const step = this.steps.find((candidate) => candidate.step === event.step && candidate.end === undefined)
    if (!step) return
    step.end = now
    step.usage = event.usage
    step.stopReason = event.stopReason
    this.render()
  }

  /** A persisted agent message: its tool calls start running now. */
  message(message) {
    if (!Array.isArray(message.content)) return
    const now = performance.now()
    for (const block of message.content) {
      if (block.type === 'tool_use' && !this.tools.has(block.id))
        this.tools.set(block.id, { name: block.name, start: now })
    }
  }

  toolResult(event, now) {
    const tool = this.tools.get(event.toolUseId)
    if (tool) {
      tool.end = now
      tool.isError = Boolean(event.isError)
    }
    this.render()
  }

  retry(event) {
    this.retries++
    this.notes.push(
      `retry ${event.attempt} in ${duration(event.delayMs)} (${event.error?.kind ?? event.error?.code})`,
    )
    this.render()
  }

  subagent(event) {
    if (event.event?.type === 'step-start')
      this.notes.push(`sub-agent ${event.agent} step ${event.event.step}`)
  }

  note(text) {
    this.notes.push(text)
    this.render()
  }

  finish(now, error) {
    if (this.endedAt !== undefined) return
    this.endedAt = now
    this.outcome = error === undefined ? 'done' : (error.kind ?? error.code ?? 'error')
    this.render()
  }

  render() {
    const end = this.endedAt ?? performance.now()
    const input = this.steps.reduce((sum, step) => sum + (step.usage?.inputTokens ?? 0), 0)
    const output = this.steps.reduce((sum, step) => sum + (step.usage?.outputTokens ?? 0), 0)
    const parts = [
      'Trace',
      `${this.steps.length} step${this.steps.length === 1 ? '' : 's'}`,
      ...(this.tools.size > 0 ? [`${this.tools.size} tool${this.tools.size === 1 ? '' : 's'}`] : []),
      ...(this.retries > 0 ? [`${this.retries} retr${this.retries === 1 ? 'y' : 'ies'}`] : []),
      duration(end - this.startedAt),
      ...(this.firstTokenAt === undefined
        ? []
        : [`first token ${duration(this.firstTokenAt - this.startedAt)}`]),
      ...(input + output > 0 ? [`${numberFormat.format(input + output)} tokens`] : []),
      ...(this.outcome === undefined ? ['running'] : this.outcome === 'done' ? [] : [this.outcome]),
      ...(this.joined ? ['(joined while running: times start then)'] : []),
    ]
    this.summary.textContent = parts.join(' · ')
    const rows = el('ol', 'trace-steps')
    for (const step of this.steps) {
      const row = el('li', 'trace-step')
      row.dataset.testid = 'trace-step'
      const facts = [
        `step ${step.step}`,
        step.agent,
        step.model,
        step.end === undefined ? 'running' : duration(step.end - step.start),
        ...(step.firstTokenAt === undefined
          ? []
          : [`first token ${duration(step.firstTokenAt - step.start)}`]),
        ...(step.usage
          ? [
              `${numberFormat.format(step.usage.inputTokens)} in / ${numberFormat.format(step.usage.outputTokens)} out`,
            ]
          : []),
        ...(step.stopReason ? [step.stopReason] : []),
      ]
      row.textContent = facts.join(' · ')
      rows.append(row)
    }
    const tools = el('ul', 'trace-tools')
    for (const tool of this.tools.values()) {
      const row = el('li', 'trace-tool')
      row.dataset.testid = 'trace-tool'
      row.textContent = `${tool.name} · ${tool.end === undefined ? 'waiting' : duration(tool.end - tool.start)}${tool.isError ? ' · failed' : ''}`
      tools.append(row)
    }
    const notes = el('ul', 'trace-notes')
    for (const note of this.notes) notes.append(el('li', '', note))
    this.body.replaceChildren(rows, tools, notes)
  }
}
