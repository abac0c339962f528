import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: { conditions: ['@agentx/source'] },
  ssr: { resolve: { conditions: ['@agentx/source'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    // Installs Debian's chromium for the browser tests when it is missing and permitted.
    globalSetup: ['test/global-setup.ts'],
  },
})
