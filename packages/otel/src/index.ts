// The public API of @agentx/otel: one function and the types of its arguments.
export { INSTRUMENTATION_NAME, instrumentAgent } from './instrument-agent.js'
export type { InstrumentAgentOptions } from './instrument-agent.js'
export type { InstrumentableAgent, ObservedEvent, ObservedEventListener } from './observed-event.js'
