export { ScriptedAdapter } from './scripted-adapter.js'
export type { ScriptedAdapterOptions, ScriptedCall, ScriptedTurn } from './scripted-adapter.js'
export { collect, textTurn, toolCallTurn, usage } from './stream-helpers.js'
export type { TextTurnOptions } from './stream-helpers.js'
