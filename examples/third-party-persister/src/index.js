// The public API of the example: a third-party AgentPersister.
export { JsonFilePersister } from './json-file-persister.js'
export { writeFileAtomically } from './write-file-atomically.js'
