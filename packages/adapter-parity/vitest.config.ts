import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: { conditions: ['@agentx/source'] },
  ssr: { resolve: { conditions: ['@agentx/source'] } },
  test: { include: ['src/**/*.test.ts'], testTimeout: 20_000 },
})
