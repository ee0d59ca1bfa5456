import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import type { ToolSpec } from '../../workflows/tool-spec';
import { hashOf, type RunnableTool } from '../tools/tool-registry';
import type { McpServerConfig } from './mcp-config';
import { mcpCallFailure, type McpCallSite } from './mcp-errors';
import { redact } from './mcp-log';
import type { McpClientAccess, McpServerExtras } from './mcp-protocol-extras';
import { mcpToolName } from './mcp-tool-name';

/** Resources named in the read tool's description (the rest through the list tool). */
const LISTED_IN_DESCRIPTION = 20;
const DESCRIPTION_MAX_CHARS = 3_000;
/** Resources per page of the list tool. */
const LIST_PAGE = 50;
/**
 * A resource's text is cut here before anything else: the whole of it is
 * stored by reference when it passes the model's limit, and one stored
 * document must stay well under MongoDB's 16 MB.
 */
const READ_MAX_CHARS = 4_000_000;

const oneLine = (text: string | undefined, max: number) => {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
};

function describeResource(r: Resource): string {
  const label = r.title ?? r.name;
  const desc = r.description ? `: ${oneLine(r.description, 120)}` : '';
  return `- ${r.uri} (${oneLine(label, 60)}${r.mimeType ? `, ${r.mimeType}` : ''})${desc}`;
}

/** The whole text of a read, blobs described (the chat API carries text only). */
export function readResultToText(result: ReadResourceResult): string {
  return result.contents
    .map((c) => {
      const type = c.mimeType ? ` (${c.mimeType})` : '';
      if ('text' in c && typeof c.text === 'string') return result.contents.length === 1 ? c.text : `[resource ${c.uri}${type}]\n${c.text}`;
      const blob = 'blob' in c && typeof c.blob === 'string' ? c.blob : '';
      return `[resource ${c.uri}${type}, ${Math.floor((blob.length * 3) / 4)} bytes of binary data, not shown]`;
    })
    .join('\n');
}

interface ResourceToolBinding {
  server: McpServerConfig;
  extras: McpServerExtras;
  access: McpClientAccess;
  defaultTimeoutMs: number;
}

/**
 * The tools through which the model reads a server's resources, for servers
 * that declare the capability: `mcp_<server>_read_resource` (its description
 * names the first resources) and `mcp_<server>_list_resources`. They are
 * ordinary read-only tools: the description is part of the hash, so a
 * resource list that changed is pinned and re-approved like a changed tool,
 * and a large read is cut for the model and stored whole by reference.
 */
export function resourceRunnables({ server, extras, access, defaultTimeoutMs }: ResourceToolBinding): RunnableTool[] {
  if (!extras.declaresResources) return [];
  const timeoutMs = server.timeoutMs ?? defaultTimeoutMs;
  const clean = (text: string) => redact(text, server.secrets);
  const resources = extras.resources;
  const readName = mcpToolName(server.name, 'read_resource');
  const listName = mcpToolName(server.name, 'list_resources');

  let known = resources.slice(0, LISTED_IN_DESCRIPTION).map(describeResource).join('\n');
  if (known.length > DESCRIPTION_MAX_CHARS) known = `${known.slice(0, DESCRIPTION_MAX_CHARS)}…`;
  const more = resources.length > LISTED_IN_DESCRIPTION ? `\n(${resources.length - LISTED_IN_DESCRIPTION} more: call ${listName}.)` : '';
  const readDescription =
    `Reads one resource of the ${server.name} service by its URI and returns its content as text (binary content is described, not shown). ` +
    `Known resources:\n${known || '(none listed yet; call ' + listName + ')'}${more}`;
  const readParameters = {
    type: 'object',
    properties: { uri: { type: 'string', minLength: 1, maxLength: 2048, description: 'The resource URI, exactly as listed.' } },
    required: ['uri'],
    additionalProperties: false,
  };
  const listDescription = `Lists the resources of the ${server.name} service (URI, name, type, description), ${LIST_PAGE} at a time; pass "page" (from 1) for more.`;
  const listParameters = {
    type: 'object',
    properties: { page: { type: 'integer', minimum: 1, maximum: 100, description: 'Page of the list, from 1. Default 1.' } },
    additionalProperties: false,
  };
  const spec = (name: string, description: string, parameters: Record<string, unknown>): ToolSpec => ({
    name,
    description,
    parameters,
    risk: 'read',
    requiresConfirmation: false,
    timeoutMs,
    maxAttempts: 3,
    source: 'mcp',
    hash: hashOf({ d: description, p: parameters }),
  });
  const readSpec = spec(readName, readDescription, readParameters);
  const listSpec = spec(listName, listDescription, listParameters);
  const site = (toolName: string): McpCallSite => ({ toolName, server: server.name, timeoutMs, secrets: server.secrets });
  const objectArgs = (args: unknown) => typeof args === 'object' && args !== null && !Array.isArray(args);

  const read: RunnableTool = {
    spec: readSpec,
    async run(args, ctx) {
      try {
        const uri = String(args.uri);
        const result = await access.withClient(timeoutMs, ctx.signal, (client, timeout) => client.readResource({ uri }, { signal: ctx.signal, timeout }));
        const text = clean(readResultToText(result));
        return text.length <= READ_MAX_CHARS ? text : `${text.slice(0, READ_MAX_CHARS)}\n[cut at ${READ_MAX_CHARS} of ${text.length} characters]`;
      } catch (err) {
        throw mcpCallFailure(err, site(readName));
      }
    },
    parse(args) {
      if (!objectArgs(args)) return { ok: false, message: 'the arguments must be a JSON object' };
      const uri = (args as { uri?: unknown }).uri;
      if (typeof uri !== 'string' || uri.length === 0 || uri.length > 2048) return { ok: false, message: 'uri: a string of 1 to 2048 characters is required' };
      return { ok: true, value: { uri } };
    },
  };
  const list: RunnableTool = {
    spec: listSpec,
    async run(args) {
      const page = typeof args.page === 'number' ? args.page : 1;
      const all = extras.resources;
      const slice = all.slice((page - 1) * LIST_PAGE, page * LIST_PAGE);
      if (slice.length === 0) return all.length === 0 ? 'The server lists no resources.' : `No page ${page}: there are ${all.length} resources.`;
      const next = page * LIST_PAGE < all.length ? `\n(page ${page} of ${Math.ceil(all.length / LIST_PAGE)}; ask for page ${page + 1} for more)` : '';
      return clean(`${slice.map(describeResource).join('\n')}${next}`);
    },
    parse(args) {
      if (!objectArgs(args)) return { ok: false, message: 'the arguments must be a JSON object' };
      const page = (args as { page?: unknown }).page;
      if (page !== undefined && (!Number.isInteger(page) || (page as number) < 1 || (page as number) > 100)) return { ok: false, message: 'page: an integer from 1 to 100' };
      return { ok: true, value: page === undefined ? {} : { page } };
    },
  };
  return [read, list];
}
