import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { RiskLevel } from '../../workflows/tool-spec';
import { expandEnvReferences } from './mcp-env-expansion';
import { McpOAuthSettings } from './mcp-oauth-config';

/** What a server's tool may be changed to, per tool name as the server spells it. */
export const McpToolOverride = z.strictObject({
  /** Replaces the server's description (what the model reads). */
  description: z.string().min(1).optional(),
  /** Replaces the risk derived from the tool's annotations. */
  risk: RiskLevel.optional(),
  /** Per-call timeout in ms. */
  timeoutMs: z.number().int().positive().optional(),
});
export type McpToolOverride = z.infer<typeof McpToolOverride>;

const common = {
  /** `false` keeps the entry in the file without connecting to it. */
  enabled: z.boolean().default(true),
  /** Only these tools (server spelling) are offered; omitted means all. */
  allowTools: z.array(z.string().min(1)).optional(),
  /** These tools are never offered. */
  denyTools: z.array(z.string().min(1)).default([]),
  toolOverrides: z.record(z.string(), McpToolOverride).default({}),
  /**
   * The risk of every tool of this server, e.g. `external` for a mail or chat
   * server; a tool override's `risk` wins over it.
   */
  risk: RiskLevel.optional(),
  /** Default per-call timeout in ms for this server's tools (else the worker's TOOL_TIMEOUT_MS). */
  timeoutMs: z.number().int().positive().optional(),
  /**
   * The server's read-only tools answer fast: they get a short timeout
   * (FAST_READ_ONLY_TIMEOUT_MS unless a tool override sets one) and so run as
   * local activities, without a round trip through the Temporal server. See
   * docs/mcp.md for what that trades away.
   */
  fastReadOnly: z.boolean().default(false),
  /** Bound on the first connect (which may include an install); else the worker's MCP_FIRST_CONNECT_TIMEOUT_MS. */
  firstConnectTimeoutMs: z.number().int().positive().optional(),
};

export const McpStdioServer = z.strictObject({
  type: z.literal('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Added to a minimal inherited environment (PATH, HOME, ...), as the SDK does. */
  env: z.record(z.string(), z.string()).default({}),
  /** A relative path is resolved against the config file's folder. */
  cwd: z.string().min(1).optional(),
  ...common,
});

export const McpHttpServer = z.strictObject({
  type: z.literal('http'),
  url: z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' }),
  /** Sent with every request; values are secrets and are never logged. */
  headers: z.record(z.string(), z.string()).default({}),
  /** The server needs an OAuth access token (docs/mcp.md, "OAuth"). */
  oauth: McpOAuthSettings.optional(),
  ...common,
});

export const McpServerEntry = z.discriminatedUnion('type', [McpStdioServer, McpHttpServer]);
export type McpServerEntry = z.infer<typeof McpServerEntry>;

/** The file: `{ "mcpServers": { "<name>": { ... } } }`; other top-level keys are ignored. */
export const McpConfigFile = z.object({
  mcpServers: z.record(z.string().min(1).max(64), z.unknown()),
});

/** One server, validated, with `${VAR}` expanded and the expanded values kept for redaction. */
export type McpServerConfig = McpServerEntry & {
  name: string;
  /** Strings that must never appear in a log line, event or failure message. */
  secrets: string[];
};

export interface McpConfig {
  /** Enabled servers, in file order. */
  servers: McpServerConfig[];
  /** Where it came from, for messages. */
  source: string;
}

export interface McpConfigProblem {
  server?: string;
  field: string;
  message: string;
}

/** Invalid MCP configuration: every problem names the server and the field. */
export class McpConfigError extends Error {
  readonly type = 'ConfigInvalid';
  override readonly name = 'McpConfigError';
  constructor(readonly source: string, readonly problems: McpConfigProblem[]) {
    super(
      `Invalid MCP configuration in ${source} (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((p) => `  - ${p.server !== undefined ? `server "${p.server}", ` : ''}field "${p.field}": ${p.message}`).join('\n'),
    );
  }
}

/** A missing `type` is inferred the way other MCP clients do: `url` means HTTP, otherwise stdio. */
function withType(entry: unknown): unknown {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
  const record = entry as Record<string, unknown>;
  if (record.type !== undefined) return record;
  return { ...record, type: 'url' in record ? 'http' : 'stdio' };
}

function issueProblems(server: string, error: z.ZodError): McpConfigProblem[] {
  return error.issues.flatMap((issue) => {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ server, field: base ? `${base}.${key}` : key, message: 'is not a known field' }));
    }
    return [{ server, field: base || '(entry)', message: issue.message }];
  });
}

/**
 * Validates a parsed config object. `${VAR}` references are expanded from
 * `env` before validation, so a URL built from variables is checked too.
 * Throws McpConfigError listing every problem.
 */
export function parseMcpConfig(raw: unknown, options: { env?: Record<string, string | undefined>; source?: string; baseDir?: string } = {}): McpConfig {
  const source = options.source ?? 'MCP config';
  const env = options.env ?? process.env;
  const file = McpConfigFile.safeParse(raw);
  if (!file.success) {
    throw new McpConfigError(source, file.error.issues.map((i) => ({ field: i.path.map(String).join('.') || '(file)', message: i.message })));
  }
  const problems: McpConfigProblem[] = [];
  const servers: McpServerConfig[] = [];
  for (const [name, entry] of Object.entries(file.data.mcpServers)) {
    const expansion = expandEnvReferences(withType(entry), env);
    // A disabled entry is still checked for shape, but may name variables this worker does not have.
    const disabled = (entry as { enabled?: unknown } | null)?.enabled === false;
    if (!disabled) problems.push(...expansion.problems.map((p) => ({ server: name, field: p.field, message: p.message })));
    const parsed = McpServerEntry.safeParse(expansion.value);
    if (!parsed.success) {
      problems.push(...issueProblems(name, parsed.error));
      continue;
    }
    const server = parsed.data;
    if (!server.enabled) continue;
    for (const tool of server.allowTools ?? []) {
      if (server.denyTools.includes(tool)) problems.push({ server: name, field: 'denyTools', message: `"${tool}" is both allowed and denied` });
    }
    const secrets = [...expansion.secrets];
    if (server.type === 'http') {
      const url = new URL(server.url);
      // fetch refuses such a URL with an error that quotes it whole, password included, into logs and tool failures.
      if (url.username || url.password) {
        problems.push({ server: name, field: 'url', message: 'must not carry credentials (user:password@host); send them in headers, such as "Authorization"' });
        continue;
      }
      // A key passed in the query string (?api_key=...) is as secret as a header.
      for (const value of url.searchParams.values()) if (value.length >= 8) secrets.push(value, encodeURIComponent(value));
    }
    // Header and env values are treated as secrets even when written literally in the file.
    const literal = server.type === 'http' ? Object.values(server.headers) : Object.values(server.env);
    secrets.push(...literal.filter((v) => v.length >= 4));
    if (server.type === 'http' && server.oauth?.clientSecret) secrets.push(server.oauth.clientSecret);
    if (server.type === 'stdio' && server.cwd && !isAbsolute(server.cwd) && options.baseDir) {
      server.cwd = resolve(options.baseDir, server.cwd);
    }
    servers.push({ ...server, name, secrets: [...new Set(secrets)] });
  }
  if (problems.length > 0) throw new McpConfigError(source, problems);
  return { servers, source };
}

/** Reads and validates the JSON file at `path`. */
export function loadMcpConfig(path: string, env: Record<string, string | undefined> = process.env): McpConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new McpConfigError(path, [{ field: '(file)', message: `cannot be read as JSON: ${(err as Error).message}` }]);
  }
  return parseMcpConfig(raw, { env, source: path, baseDir: dirname(resolve(path)) });
}
