// Module hooks for child processes of the tests: they import this package's TypeScript source the
// way vitest does. Node strips the types; these hooks map the `.js` specifiers of the source to
// their `.ts` files.
export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context)
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !specifier.endsWith('.js')) throw error
    return nextResolve(`${specifier.slice(0, -3)}.ts`, context)
  }
}
