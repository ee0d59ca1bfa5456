import { ErrorCode, McpError, type CallToolResult, type Tool, type ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { checkJsonSchema, mapSubschemas } from '../../workflows/json-schema-check';
import { offeredDescription } from './mcp-tool-support';
import type { RiskLevel, ToolSpec } from '../../workflows/tool-spec';
import { hashOf, type RunnableTool } from '../tools/tool-registry';
import type { McpServerConfig } from './mcp-config';
import type { McpCallOptions } from './mcp-connection';
import { mcpCallFailure, toolReportedError, type McpCallSite } from './mcp-errors';
import { consoleMcpLogger, redact, type McpLogger } from './mcp-log';
import { durableAsker, type ElicitationBroker } from './mcp-elicitation';
import { progressReporter } from './mcp-progress';
import { resultToText } from './mcp-result';
import { mcpToolName } from './mcp-tool-name';

/** What an MCP tool is called through: the server's shared connection. */
export interface McpCallTarget {
  callTool(name: string, args: Record<string, unknown>, options: McpCallOptions): Promise<CallToolResult>;
}

export interface McpToolBinding {
  server: McpServerConfig;
  tool: Tool;
  target: McpCallTarget;
  /** Used when neither the tool override nor the server sets a timeout. */
  defaultTimeoutMs: number;
  /** Routes the server's elicitation requests to the call that caused them (mcp-elicitation.ts). */
  elicitation?: ElicitationBroker;
  logger?: McpLogger;
}

/**
 * Risk from the tool's annotations. Following the MCP spec's defaults, a tool
 * that does not say it is read-only is assumed destructive unless it says
 * `destructiveHint: false`, so an unannotated tool needs confirmation.
 */
export function riskFromAnnotations(annotations: ToolAnnotations | undefined): RiskLevel {
  if (annotations?.readOnlyHint === true) return 'read';
  return annotations?.destructiveHint === false ? 'write' : 'destructive';
}

/** Read-only tools are idempotent by nature and may retry; others only when they say they are idempotent; destructive ones never. */
export function maxAttemptsFor(risk: RiskLevel, annotations: ToolAnnotations | undefined): number {
  if (risk === 'destructive') return 1;
  return (annotations?.idempotentHint ?? risk === 'read') ? 3 : 1;
}

/**
 * The JSON schema the model sees: the server's input schema without
 * `$schema`, always an object, and every array with `items` (OpenAI refuses a
 * request whose tool has an array schema without them, failing every turn).
 */
export function modelParameters(inputSchema: Tool['inputSchema']): Record<string, unknown> {
  const schema = mapSubschemas(structuredClone(inputSchema), (node) => {
    const types = Array.isArray(node.type) ? node.type : [node.type];
    return types.includes('array') && node.items === undefined && node.prefixItems === undefined ? { ...node, items: {} } : node;
  }) as Record<string, unknown>;
  delete schema.$schema;
  schema.type = 'object';
  schema.properties ??= {};
  return schema;
}

/**
 * The timeout of a read-only tool on a `fastReadOnly` server. The workflow
 * runs a read-only tool whose timeout is at most LOCAL_TOOL_MAX_TIMEOUT_MS
 * (workflows/react-turn.ts, 2 s) as a local activity; this puts it there.
 */
export const FAST_READ_ONLY_TIMEOUT_MS = 2_000;

function fastReadOnlyTimeout(server: McpServerConfig, risk: RiskLevel): number | undefined {
  if (!server.fastReadOnly || risk !== 'read') return undefined;
  return Math.min(server.timeoutMs ?? FAST_READ_ONLY_TIMEOUT_MS, FAST_READ_ONLY_TIMEOUT_MS);
}

/** Our own request timeout fires just before the activity's, so the model gets our message, and the server a cancel. */
function requestTimeout(timeoutMs: number): number {
  return Math.max(100, timeoutMs - Math.min(500, Math.round(timeoutMs * 0.1)));
}

/** An MCP tool as a runnable tool: spec from the server's listing and the config, calls through the shared connection. */
export function mcpRunnable({ server, tool, target, defaultTimeoutMs, elicitation, logger }: McpToolBinding): RunnableTool {
  const override = server.toolOverrides[tool.name] ?? {};
  const parameters = modelParameters(tool.inputSchema);
  const risk = override.risk ?? server.risk ?? riskFromAnnotations(tool.annotations);
  const description = offeredDescription(override.description ?? tool.description ?? tool.annotations?.title ?? tool.title ?? `Tool "${tool.name}" of the ${server.name} service.`);
  const spec: ToolSpec = {
    name: mcpToolName(server.name, tool.name),
    description,
    parameters,
    risk,
    requiresConfirmation: false,
    timeoutMs: override.timeoutMs ?? fastReadOnlyTimeout(server, risk) ?? server.timeoutMs ?? defaultTimeoutMs,
    maxAttempts: maxAttemptsFor(risk, tool.annotations),
    source: 'mcp',
    // Covers what the server says about the tool, so a tool changed after approval is noticed.
    hash: hashOf({ d: description, s: tool.description ?? null, p: tool.inputSchema }),
  };
  const site: McpCallSite = { toolName: spec.name, server: server.name, timeoutMs: spec.timeoutMs, secrets: server.secrets };
  const clean = (text: string) => redact(text, server.secrets);
  return {
    spec,
    async run(args, ctx) {
      const progress = progressReporter(ctx, clean);
      // A question the server asks during this call becomes a durable wait in the session.
      const release = elicitation?.enter(durableAsker(ctx, { server: server.name, clean, log: logger ?? consoleMcpLogger }), `${ctx.namespace.tenant}/${ctx.namespace.user}`);
      // Given up on before the server answered (an interrupt, our timeout): the server may still be running it.
      let abandoned = false;
      try {
        const result = await target.callTool(tool.name, args, {
          signal: ctx.signal,
          timeoutMs: requestTimeout(spec.timeoutMs),
          onprogress: (p) => progress.onprogress(p),
        });
        const text = clean(resultToText(result));
        if (result.isError) throw toolReportedError(site, text);
        return text;
      } catch (err) {
        abandoned = ctx.signal.aborted || (err instanceof McpError && err.code === ErrorCode.RequestTimeout);
        throw mcpCallFailure(err, site);
      } finally {
        release?.(abandoned);
        await progress.close();
      }
    },
    parse(args) {
      if (typeof args !== 'object' || args === null || Array.isArray(args)) return { ok: false, message: 'the arguments must be a JSON object' };
      const issues = checkJsonSchema(args, parameters);
      if (issues.length === 0) return { ok: true, value: args as Record<string, unknown> };
      return { ok: false, message: issues.map((i) => `${i.path} ${i.message}`).join('; ') };
    },
  };
}
