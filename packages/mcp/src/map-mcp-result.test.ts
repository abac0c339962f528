import { describe, expect, it } from 'vitest'
import { isMcpClientError } from './mcp-client-error.js'
import { mapMcpResult } from './map-mcp-result.js'

describe('mapMcpResult', () => {
  it('keeps text and image blocks in order', () => {
    expect(
      mapMcpResult(
        {
          content: [
            { type: 'text', text: 'a' },
            { type: 'image', data: 'AAA=', mimeType: 'image/jpeg' },
          ],
        },
        'tool',
      ),
    ).toEqual([
      { type: 'text', text: 'a' },
      { type: 'image', mediaType: 'image/jpeg', data: 'AAA=' },
    ])
  })

  it('uses structuredContent, or an old-style toolResult, when there is no content', () => {
    expect(mapMcpResult({ content: [], structuredContent: { n: 1 } }, 't')).toEqual([
      { type: 'text', text: '{"n":1}' },
    ])
    expect(mapMcpResult({ toolResult: [1, 2] }, 't')).toEqual([{ type: 'text', text: '[1,2]' }])
    expect(mapMcpResult({ content: [] }, 't')).toEqual([])
  })

  it('describes what AgentX messages cannot hold instead of dropping it silently', () => {
    expect(
      mapMcpResult(
        {
          content: [
            {
              type: 'resource',
              resource: { uri: 'file:///a.bin', blob: 'AA==', mimeType: 'application/pdf' },
            },
            { type: 'video', data: 'x' },
          ],
        },
        't',
      ),
    ).toEqual([
      { type: 'text', text: '[resource file:///a.bin (application/pdf) not shown]' },
      { type: 'text', text: '[video content not shown]' },
    ])
  })

  it('throws MCP_TOOL_ERROR with the text of an isError result', () => {
    const attempt = (result: object) => {
      try {
        mapMcpResult(result, 'lookup')
      } catch (error) {
        if (isMcpClientError(error)) return [error.code, error.message, error.retryable]
      }
      return undefined
    }
    expect(
      attempt({
        isError: true,
        content: [
          { type: 'text', text: 'line 1' },
          { type: 'image', data: 'AA==', mimeType: 'image/png' },
          { type: 'text', text: 'line 2' },
        ],
      }),
    ).toEqual(['MCP_TOOL_ERROR', 'line 1\nline 2', false])
    expect(attempt({ isError: true, content: [] })).toEqual([
      'MCP_TOOL_ERROR',
      'The MCP tool "lookup" reported an error.',
      false,
    ])
  })
})
