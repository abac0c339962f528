// `node --import ./test/register-typescript-source.mjs`: see typescript-source-hooks.mjs.
import { register } from 'node:module'

register('./typescript-source-hooks.mjs', import.meta.url)
