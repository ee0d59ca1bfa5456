import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

type ContentBlock = CallToolResult['content'][number];

/** Approximate decoded size of base64 data, for a description instead of the bytes. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * One content block as text. Tool messages in the chat API carry text only,
 * so binary blocks (images, audio, blob resources) are described, not sent.
 */
export function blockToText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]`;
    case 'audio':
      return `[audio ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]`;
    case 'resource': {
      const r = block.resource;
      const type = r.mimeType ? ` (${r.mimeType})` : '';
      if ('text' in r) return `[resource ${r.uri}${type}]\n${r.text}`;
      return `[resource ${r.uri}${type}, ${base64Bytes(r.blob)} bytes of binary data, not shown]`;
    }
    case 'resource_link':
      return `[resource link: ${block.name} <${block.uri}>${block.description ? ` ${block.description}` : ''}]`;
    default: {
      const unknown: never = block;
      return `[unsupported content ${JSON.stringify((unknown as { type?: unknown }).type)}]`;
    }
  }
}

/**
 * The text the model reads for a tool result: the content blocks in order;
 * structured content only when there is no text (servers that return both
 * repeat the JSON as text, per the spec).
 */
export function resultToText(result: CallToolResult): string {
  const parts = (result.content ?? []).map(blockToText);
  const hasText = (result.content ?? []).some((b) => b.type === 'text' || b.type === 'resource');
  if (!hasText && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}
