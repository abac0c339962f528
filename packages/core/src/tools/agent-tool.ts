import type { Tool } from './tool.js'

const AGENT_TOOL = Symbol.for('agentx.agent-tool')

/** Options of {@link agentTool}. */
export interface AgentToolOptions {
  /** The tool's name. Default is the profile's name. */
  name?: string
  /** What the model is told the tool does. Default is the profile's `description`. */
  description?: string
}

/** The input of an agent tool. */
export interface AgentToolInput {
  task: string
}

/**
 * A tool that runs the profile `profileName` of the same agent on a task, in a **child session**
 * (DESIGN §10.3, seed 002): the child sees only its task, its final text is the tool result, its
 * usage counts in the parent send's usage and its events reach the parent as `subagent` events.
 * An approval inside the child makes the parent wait too; a child's failure becomes an `isError`
 * result. Give it in `tools` of the agent or of a profile.
 */
export function agentTool(profileName: string, options: AgentToolOptions = {}): Tool<AgentToolInput> {
  const tool: Tool<AgentToolInput> & { [AGENT_TOOL]: string } = {
    name: options.name ?? profileName,
    description: options.description ?? '',
    inputSchema: {
      type: 'object',
      properties: {
        task: { type: 'string', description: `The task for the ${profileName} agent, self-contained.` },
      },
      required: ['task'],
      additionalProperties: false,
    },
    execute: () => {
      throw new Error(`The agent tool '${profileName}' runs only inside an AgentX session.`)
    },
    [AGENT_TOOL]: profileName,
  }
  return tool
}

/** The profile an agent tool runs, or `undefined` for any other tool. */
export function agentToolProfile(tool: Tool | undefined): string | undefined {
  const profile = (tool as { [AGENT_TOOL]?: unknown } | undefined)?.[AGENT_TOOL]
  return typeof profile === 'string' ? profile : undefined
}

/** Whether `tool` is an agent tool (made by {@link agentTool}). */
export function isAgentTool(tool: Tool | undefined): boolean {
  return agentToolProfile(tool) !== undefined
}
