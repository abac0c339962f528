import type { AnyMessage, ToolUseBlock } from '../contracts/messages.js'
import type { Tool } from '../tools/tool.js'
import type { SessionProfile } from './session-profile.js'
import { toolCallsOf } from './tool-step.js'

/** The name of a handoff tool: `transfer_to_<profile>`. */
export const HANDOFF_PREFIX = 'transfer_to_'

/**
 * The `transfer_to_<name>` tools of a profile with `handoffs` (DESIGN §10.3, seed 001). Calling
 * one hands the conversation to that profile: the kernel sees the call in the tool step, emits
 * `handoff`, makes it the active agent and continues the same send with it.
 */
export function handoffTools(profile: SessionProfile, profiles: ReadonlyMap<string, SessionProfile>): Tool[] {
  return profile.handoffs.map((target) => {
    const description = profiles.get(target)?.description
    return {
      name: `${HANDOFF_PREFIX}${target}`,
      description: `Hand the conversation over to the '${target}' agent${description ? `: ${description}` : ''}. It answers from then on.`,
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      execute: (_input, context) => {
        // Only the first transfer of a reply hands over (see handoffTarget); a later one says so.
        const first = firstHandoff(lastCalls(context.messages), profile)
        if (first !== undefined && first.id !== context.toolCallId) {
          throw new Error(
            `Not transferred: this reply already hands the conversation to the '${first.target}' agent, and only its first transfer counts.`,
          )
        }
        return `Transferred to ${target}. The ${target} agent answers from now on.`
      },
    }
  })
}

/** The profile a batch hands over to: the first `transfer_to_<name>` call naming one of `profile.handoffs`. */
export function handoffTarget(calls: readonly ToolUseBlock[], profile: SessionProfile): string | undefined {
  return firstHandoff(calls, profile)?.target
}

function firstHandoff(
  calls: readonly ToolUseBlock[],
  profile: SessionProfile,
): { id: string; target: string } | undefined {
  for (const call of calls) {
    if (!call.name.startsWith(HANDOFF_PREFIX)) continue
    const target = call.name.slice(HANDOFF_PREFIX.length)
    if (profile.handoffs.includes(target)) return { id: call.id, target }
  }
  return undefined
}

/** The tool calls of the latest agent message: the batch a tool of it runs in. */
function lastCalls(messages: readonly AnyMessage[]): ToolUseBlock[] {
  const last = messages.findLast((message) => message.type === 'agent')
  return last === undefined ? [] : toolCallsOf(last)
}
