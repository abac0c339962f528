import { DEFAULT_CLAUDE_MODEL as CLAUDE_ADAPTER_DEFAULT } from '@agentx/adapter-claude'
import { ScriptedAdapter } from '@agentx/core/testing'
import { describe, expect, it } from 'vitest'
import { DEFAULT_CLAUDE_MODEL, loadProviders, redact, secretsOf } from './load-providers.js'
import { toProviderInfo } from './playground-provider.js'

describe('loadProviders', () => {
  it('offers only the offline demo provider when no key is set, importing no adapter package', async () => {
    const imported: string[] = []
    const providers = await loadProviders({}, { importModule: async (specifier) => imported.push(specifier) })
    expect(providers.map((provider) => [provider.id, provider.offline, provider.adapter?.getName()])).toEqual(
      [['demo', true, 'demo']],
    )
    expect(providers[0]?.tools?.map((tool) => tool.name)).toEqual([
      'get_time',
      'calculator',
      'deploy_service',
      'ask_user',
      'researcher',
    ])
    expect(Object.keys(providers[0]?.agents ?? {})).toEqual(['default', 'billing', 'researcher'])
    expect(imported).toEqual([])
  })

  it('creates one adapter per key found, with the options each factory expects', async () => {
    const calls: Array<[string, unknown]> = []
    const factory = (name: string) => (options: unknown) => {
      calls.push([name, options])
      return new ScriptedAdapter([], { name })
    }
    const providers = await loadProviders(
      {
        ANTHROPIC_API_KEY: ' ant-key ',
        GEMINI_API_KEY: 'gem-key',
        OPENAI_API_KEY: '',
        OPENAI_MODELS: 'a, b',
      },
      {
        importModule: async (specifier) => ({
          createClaudeAdapter: factory('claude'),
          createGeminiAdapter: factory('gemini'),
          createOpenAIAdapter: factory(specifier),
        }),
      },
    )
    expect(providers.map((provider) => provider.id)).toEqual(['demo', 'claude', 'gemini'])
    expect(calls).toEqual([
      ['claude', { apiKey: 'ant-key' }],
      ['gemini', { apiKey: 'gem-key' }],
    ])
    expect(providers[1]?.tools?.map((tool) => tool.name)).toEqual(['get_time', 'calculator'])
  })

  it('talks to an OpenAI-compatible server through Chat Completions when OPENAI_BASE_URL is set', async () => {
    const calls: unknown[] = []
    const providers = await loadProviders(
      { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', OPENAI_MODELS: 'llama3.2, qwen3' },
      {
        importModule: async () => ({
          createOpenAIAdapter: (options: unknown) => {
            calls.push(options)
            return new ScriptedAdapter([], { name: 'openai' })
          },
        }),
      },
    )
    expect(providers[1]).toMatchObject({
      id: 'openai-compatible',
      label: 'OpenAI-compatible (127.0.0.1:11434)',
      models: ['llama3.2', 'qwen3'],
    })
    expect(calls).toEqual([{ baseURL: 'http://127.0.0.1:11434/v1', api: 'chat' }])
  })

  it('points the Responses API at a gateway when OPENAI_API=responses: the base URL never forces Chat Completions', async () => {
    const calls: unknown[] = []
    const providers = await loadProviders(
      {
        OPENAI_BASE_URL: 'https://gateway.example.com/openai/v1',
        OPENAI_API: 'responses',
        OPENAI_API_KEY: 'gw-key',
      },
      {
        importModule: async () => ({
          createOpenAIAdapter: (options: unknown) => {
            calls.push(options)
            return new ScriptedAdapter([], { name: 'openai' })
          },
        }),
      },
    )
    expect(providers[1]).toMatchObject({
      id: 'openai-compatible',
      label: 'OpenAI-compatible (gateway.example.com, responses API)',
    })
    expect(providers[1]?.tools?.length).toBeGreaterThan(0)
    expect(calls).toEqual([
      { apiKey: 'gw-key', baseURL: 'https://gateway.example.com/openai/v1', api: 'responses' },
    ])
  })

  it('lists a provider whose package fails to load as unavailable, without the key in the reason', async () => {
    const key = 'sk-secret-value-42'
    const providers = await loadProviders(
      { OPENAI_API_KEY: key },
      {
        importModule: async () => {
          throw new Error(`boom while reading ${key}`)
        },
      },
    )
    const openai = providers[1]!
    expect(openai.adapter).toBeUndefined()
    expect(openai.unavailableReason).toBe(
      'Could not load @agentx/adapter-openai: boom while reading [redacted]',
    )
    const info = toProviderInfo(openai)
    expect(info).toMatchObject({ id: 'openai', available: false })
    expect(JSON.stringify(info)).not.toContain(key)
  })

  it('treats every key and the database password as secrets', () => {
    const secrets = secretsOf({
      OPENAI_API_KEY: 'sk-1234',
      AGENTX_PG_URL: 'postgres://user:p%40ss-word@db:5432/agentx',
    })
    expect(secrets).toContain('sk-1234')
    expect(secrets).toContain('p@ss-word')
    expect(redact('connect to postgres://user:p%40ss-word@db:5432/agentx failed; p@ss-word', secrets)).toBe(
      'connect to [redacted] failed; [redacted]',
    )
  })

  it('offers the Claude adapter’s own default model first, not a deprecated one', async () => {
    expect(DEFAULT_CLAUDE_MODEL).toBe(CLAUDE_ADAPTER_DEFAULT)
    const providers = await loadProviders(
      { ANTHROPIC_API_KEY: 'key' },
      {
        importModule: async () => ({
          createClaudeAdapter: () => new ScriptedAdapter([], { name: 'claude' }),
        }),
      },
    )
    expect(providers.find((provider) => provider.id === 'claude')?.models[0]).toBe(CLAUDE_ADAPTER_DEFAULT)
  })
})
