// The tool the model wants to run: it "deploys" a service by appending one line to a log file.
// That line is the side effect nobody wants to happen twice, or without asking first.
import { appendFile } from 'node:fs/promises'

/**
 * @typedef {object} DeployInput
 * @property {string} service
 * @property {string} version
 * @property {'staging' | 'production'} environment
 */

/**
 * The `deploy` tool. Production deploys wait for a person's approval (`needsApproval` as a function
 * of the input); staging deploys run at once.
 *
 * The kernel derives what is pending from the stored messages, asking `needsApproval` again, so
 * the function must give the same answer for the same input in every process.
 *
 * @param {string} logFile where each deploy appends one JSON line
 * @returns {import('@agentx/core').Tool<DeployInput>}
 */
export function createDeployTool(logFile) {
  return {
    name: 'deploy',
    description: 'Deploys a version of a service to an environment.',
    inputSchema: {
      type: 'object',
      properties: {
        service: { type: 'string' },
        version: { type: 'string' },
        environment: { type: 'string', enum: ['staging', 'production'] },
      },
      required: ['service', 'version', 'environment'],
    },
    needsApproval: (input) => input.environment === 'production',
    execute: async (input, context) => {
      const line = { ...input, sessionId: context.sessionId, toolCallId: context.toolCallId }
      await appendFile(logFile, `${JSON.stringify(line)}\n`)
      return `Deployed ${input.service} ${input.version} to ${input.environment}.`
    },
  }
}
