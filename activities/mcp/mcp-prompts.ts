import { ApplicationFailure } from '@temporalio/common';
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';
import { FailureType } from '../../workflows/failure-types';
import { blockToText } from './mcp-result';
import { errorText, redact } from './mcp-log';
import type { McpClientAccess } from './mcp-protocol-extras';

/** One prompt a server offers, as the client lists it. */
export interface McpPromptInfo {
  server: string;
  name: string;
  title?: string;
  description?: string;
  arguments: Array<{ name: string; description?: string; required?: boolean }>;
}

export interface ListPromptsResult {
  prompts: McpPromptInfo[];
  /** Servers that could not be asked (down, or an error), with why. Servers without the prompts capability are left out silently. */
  unavailable: Array<{ server: string; reason: string }>;
}

export interface ExpandPromptInput {
  server: string;
  name: string;
  arguments?: Record<string, string>;
}

export interface ExpandPromptResult {
  server: string;
  name: string;
  /** The prompt's messages as one user message (what a chat sends). */
  text: string;
  description?: string;
}

/** Bounds: prompts listed per server, characters of descriptions, and of an expanded prompt (a message's own limit). */
const MAX_PROMPTS_PER_SERVER = 200;
const DESCRIPTION_CHARS = 500;
export const MAX_EXPANDED_CHARS = 100_000;

/** What the prompt activities need of the MCP pool. */
export interface McpPromptServers {
  connections: ReadonlyArray<McpClientAccess & { server: { secrets: readonly string[] } }>;
}

const cut = (text: string | undefined, max: number) => (text === undefined ? undefined : text.length <= max ? text : `${text.slice(0, max - 1)}…`);

function info(server: string, p: Prompt, clean: (t: string) => string): McpPromptInfo {
  return {
    server,
    name: p.name,
    ...(p.title ? { title: clean(cut(p.title, 200)!) } : {}),
    ...(p.description ? { description: clean(cut(p.description, DESCRIPTION_CHARS)!) } : {}),
    arguments: (p.arguments ?? []).slice(0, 50).map((a) => ({
      name: a.name,
      ...(a.description ? { description: clean(cut(a.description, DESCRIPTION_CHARS)!) } : {}),
      ...(a.required !== undefined ? { required: a.required } : {}),
    })),
  };
}

/** A prompt's messages as the text of one user message: assistant turns, if any, are labelled. */
export function promptToText(result: GetPromptResult): string {
  const onlyUser = result.messages.every((m) => m.role === 'user');
  return result.messages
    .map((m) => {
      const text = blockToText(m.content);
      return onlyUser ? text : `[${m.role}]\n${text}`;
    })
    .join('\n\n');
}

/**
 * Lists and expands MCP prompts for the client. Prompts are the user's to
 * choose (the model never sees them as tools): the expanded text becomes the
 * user's message.
 */
export function createPromptActivities(servers: () => McpPromptServers | undefined, timeoutMs = 10_000) {
  const find = (name: string) => {
    const pool = servers();
    if (!pool) throw ApplicationFailure.nonRetryable('This worker has no MCP servers configured (MCP_CONFIG_PATH).', FailureType.ConfigInvalid);
    const connection = pool.connections.find((c) => c.name === name);
    if (!connection) {
      throw ApplicationFailure.nonRetryable(`No MCP server named "${name}". Servers: ${pool.connections.map((c) => c.name).join(', ') || 'none'}.`, FailureType.ToolNotFound);
    }
    return connection;
  };
  return {
    async listMcpPrompts(_input: Record<string, never> = {}): Promise<ListPromptsResult> {
      const pool = servers();
      if (!pool) return { prompts: [], unavailable: [] };
      const results = await Promise.all(
        pool.connections.map(async (c) => {
          const clean = (t: string) => redact(t, c.server.secrets);
          try {
            const prompts = await c.withClient(timeoutMs, undefined, async (client, timeout) => {
              if (!client.getServerCapabilities()?.prompts) return [];
              const all: Prompt[] = [];
              let cursor: string | undefined;
              for (let page = 0; page < 10 && all.length < MAX_PROMPTS_PER_SERVER; page++) {
                const r = await client.listPrompts(cursor ? { cursor } : undefined, { timeout });
                all.push(...r.prompts);
                cursor = r.nextCursor;
                if (!cursor) break;
              }
              return all.slice(0, MAX_PROMPTS_PER_SERVER);
            });
            return { prompts: prompts.map((p) => info(c.name, p, clean)) };
          } catch (err) {
            return { unavailable: { server: c.name, reason: clean(errorText(err)).slice(0, 500) } };
          }
        }),
      );
      return {
        prompts: results.flatMap((r) => r.prompts ?? []),
        unavailable: results.flatMap((r) => (r.unavailable ? [r.unavailable] : [])),
      };
    },

    async expandMcpPrompt(input: ExpandPromptInput): Promise<ExpandPromptResult> {
      const connection = find(input.server);
      const clean = (t: string) => redact(t, connection.server.secrets);
      let result: GetPromptResult;
      try {
        result = await connection.withClient(timeoutMs, undefined, (client, timeout) =>
          client.getPrompt({ name: input.name, arguments: input.arguments ?? {} }, { timeout }),
        );
      } catch (err) {
        // An unknown prompt or bad arguments come back as protocol errors: the caller's to fix, no retry helps.
        const message = clean(errorText(err)).slice(0, 1_000);
        const invalid = /-32602|-32601|invalid|not found|required/i.test(message);
        throw ApplicationFailure.create({ message: `Prompt "${input.name}" of ${input.server}: ${message}`, type: invalid ? FailureType.ToolInputInvalid : FailureType.ToolFailed, nonRetryable: invalid });
      }
      const text = clean(promptToText(result));
      if (text.trim() === '') throw ApplicationFailure.nonRetryable(`Prompt "${input.name}" of ${input.server} expanded to no text.`, FailureType.ToolFailed);
      return {
        server: input.server,
        name: input.name,
        text: text.length <= MAX_EXPANDED_CHARS ? text : text.slice(0, MAX_EXPANDED_CHARS),
        ...(result.description ? { description: clean(cut(result.description, DESCRIPTION_CHARS)!) } : {}),
      };
    },
  };
}

export type PromptActivities = ReturnType<typeof createPromptActivities>;
