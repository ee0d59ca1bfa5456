import { z } from 'zod';

/**
 * The slice of the Chat Completions request body the scripted model checks.
 * Objects are loose so fields we do not model (temperature, tool_choice, …)
 * pass through, but every field we do model is checked as strictly as the
 * real API would, because a 400 here usually means our runtime built a bad
 * request.
 */

const TextPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const ContentPart = z.looseObject({ type: z.string() });

const SystemMessage = z.looseObject({
  role: z.literal('system'),
  content: z.union([z.string(), z.array(TextPart)]),
});

const UserMessage = z.looseObject({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(ContentPart)]),
});

export const AssistantToolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});
export type AssistantToolCall = z.infer<typeof AssistantToolCall>;

const AssistantMessage = z.looseObject({
  role: z.literal('assistant'),
  content: z.union([z.string(), z.array(ContentPart)]).nullable().optional(),
  tool_calls: z.array(AssistantToolCall).optional(),
});

const ToolMessage = z.looseObject({
  role: z.literal('tool'),
  tool_call_id: z.string().min(1),
  content: z.union([z.string(), z.array(TextPart)]),
});

export const ChatMessage = z.discriminatedUnion('role', [SystemMessage, UserMessage, AssistantMessage, ToolMessage]);
export type ChatMessage = z.infer<typeof ChatMessage>;

// The real API enforces this pattern, and DESIGN.md promises it for every tool name.
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export const ChatTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().regex(TOOL_NAME, `must match ${TOOL_NAME.source}`),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});
export type ChatTool = z.infer<typeof ChatTool>;

export const ChatRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessage).min(1),
  tools: z.array(ChatTool).optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
});
export type ChatRequest = z.infer<typeof ChatRequest>;

/** Plain text of a message's content; non-text parts (images, audio) contribute nothing. */
export function messageText(message: ChatMessage): string {
  const content = message.content;
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

export function lastUserIndex(request: ChatRequest): number {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    if (request.messages[i]?.role === 'user') return i;
  }
  return -1;
}

/** Text of the last `user` message, or undefined when the request has none. */
export function lastUserMessage(request: ChatRequest): string | undefined {
  const message = request.messages[lastUserIndex(request)];
  return message === undefined ? undefined : messageText(message);
}

export function offeredToolNames(request: ChatRequest): string[] {
  return (request.tools ?? []).map((tool) => tool.function.name);
}
