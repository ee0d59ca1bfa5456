import { z } from 'zod';
import { builtOnce } from './built-once';

const schemas = builtOnce('chat-message', () => {
  /** One function call the model asked for, as the OpenAI chat API shapes it. */
  const ToolCall = z.object({
    id: z.string().min(1),
    type: z.literal('function'),
    function: z.object({ name: z.string(), arguments: z.string() }),
  });

  const SystemMessage = z.object({ role: z.literal('system'), content: z.string() });

  const UserMessage = z.object({ role: z.literal('user'), content: z.string() });

  const AssistantMessage = z.object({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    tool_calls: z.array(ToolCall).optional(),
  });

  const ToolMessage = z.object({
    role: z.literal('tool'),
    tool_call_id: z.string(),
    content: z.string(),
  });

  /** A message in the model's conversation, in the wire shape the OpenAI chat API takes. */
  const ChatMessage = z.discriminatedUnion('role', [SystemMessage, UserMessage, AssistantMessage, ToolMessage]);
  return { ToolCall, SystemMessage, UserMessage, AssistantMessage, ToolMessage, ChatMessage };
});

export const { ToolCall, SystemMessage, UserMessage, AssistantMessage, ToolMessage, ChatMessage } = schemas;
export type ToolCall = z.infer<typeof ToolCall>;
export type ChatMessage = z.infer<typeof ChatMessage>;
export type AssistantMessage = z.infer<typeof AssistantMessage>;
export type ToolMessage = z.infer<typeof ToolMessage>;
