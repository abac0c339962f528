import { defineConfig } from 'vitest/config'

// Tests run against the built packages (dist), as the example and its child processes do.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Each file starts node processes of its own; two at a time keeps a 2-core machine responsive.
    maxWorkers: 2,
  },
})
