import type { ContentBlock } from '@agentx/core'
import { McpClientError } from './mcp-client-error.js'

/** A `tools/call` result as the SDK returns it (current and pre-2024-11-05 shapes). */
export interface McpCallResult {
  content?: unknown
  structuredContent?: unknown
  isError?: boolean | undefined
  toolResult?: unknown
}

/** One MCP content item, as far as the mapping reads it. */
interface McpContent {
  type?: string
  text?: string
  data?: string
  mimeType?: string
  uri?: string
  name?: string
  description?: string
  resource?: { uri?: string; text?: string; blob?: string; mimeType?: string }
}

/**
 * The AgentX content blocks of an MCP tool result:
 * - `text` → a text block; `image` → `{ type: 'image', mediaType, data }`;
 * - an embedded `resource` → a text block with its text, or an image block when it is an image blob;
 * - `resource_link` → a text block naming the link; `audio` and other binary data → a text block
 *   saying what was left out (AgentX messages hold no audio);
 * - no content but `structuredContent` (or an old-style `toolResult`) → its JSON as text.
 *
 * A result with `isError: true` throws an {@link McpClientError} `MCP_TOOL_ERROR` whose message is
 * the result's text, which the kernel records as an `isError` tool result.
 */
export function mapMcpResult(result: McpCallResult, toolName: string): ContentBlock[] {
  const blocks: ContentBlock[] = []
  if (Array.isArray(result.content)) {
    for (const item of result.content as McpContent[]) blocks.push(mapContent(item))
  }
  if (blocks.length === 0) {
    const value = result.structuredContent ?? result.toolResult
    if (value !== undefined) blocks.push({ type: 'text', text: JSON.stringify(value) })
  }
  if (result.isError === true) {
    const text = blocks
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join('\n')
    throw new McpClientError(
      text === '' ? `The MCP tool "${toolName}" reported an error.` : text,
      'MCP_TOOL_ERROR',
    )
  }
  return blocks
}

function mapContent(item: McpContent): ContentBlock {
  switch (item?.type) {
    case 'text':
      return { type: 'text', text: item.text ?? '' }
    case 'image':
      return { type: 'image', mediaType: item.mimeType ?? 'application/octet-stream', data: item.data ?? '' }
    case 'resource': {
      const resource = item.resource ?? {}
      if (typeof resource.text === 'string') return { type: 'text', text: resource.text }
      if (typeof resource.blob === 'string' && resource.mimeType?.startsWith('image/')) {
        return { type: 'image', mediaType: resource.mimeType, data: resource.blob }
      }
      return {
        type: 'text',
        text: `[resource ${resource.uri ?? ''} (${resource.mimeType ?? 'binary'}) not shown]`,
      }
    }
    case 'resource_link': {
      const about = item.description ? `: ${item.description}` : ''
      return { type: 'text', text: `[resource ${item.name ?? item.uri ?? ''} at ${item.uri ?? ''}${about}]` }
    }
    case 'audio':
      return { type: 'text', text: `[audio (${item.mimeType ?? 'unknown type'}) not shown]` }
    default:
      return {
        type: 'text',
        text: `[${typeof item?.type === 'string' ? item.type : 'unknown'} content not shown]`,
      }
  }
}
