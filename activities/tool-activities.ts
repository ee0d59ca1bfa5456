import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { FailureType } from '../workflows/failure-types';
import type { RiskLevel, ToolCatalog } from '../workflows/tool-spec';
import type { ExecuteToolInput, ExecuteToolResult, GetToolCatalogInput } from './activity-types';
import { briefSchema } from '../workflows/tool-call-plan';
import { checkArgumentPatterns } from './tools/argument-patterns';
import { toolFailure } from './tools/tool-errors';
import { hashOf, type RunnableTool } from './tools/tool-registry';
import { MAX_STORED_RESULT_CHARS, storedForm, truncateForModel, type ToolResultStore } from './tools/tool-result-store';

/** Supplies the current catalog; MCP tools come and go, so it is asked each time. */
export interface ToolSource {
  current(): { catalog: ToolCatalog; byName: Map<string, RunnableTool> };
}

export interface ToolActivityDeps {
  tools: ToolSource;
  results: ToolResultStore;
  maxResultChars: number;
  heartbeatIntervalMs?: number;
}

/** How much care a risk asks for: external and destructive calls are always confirmed. */
const RISK_RANK: Record<RiskLevel, number> = { read: 0, write: 1, external: 2, destructive: 2 };

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value ?? null);
}

const digests = new WeakMap<ToolCatalog, Map<string, ToolCatalog>>();

/**
 * Tools one model call may be offered: OpenAI refuses a request with more
 * than 128, and each server is capped at 128 on its own, so a few servers
 * together (native tools, GitHub's ninety, a browser's, a file system's)
 * failed every model call.
 */
export const MAX_OFFERED_TOOLS = 128;
/**
 * Bytes of tool definitions (as JSON) one session may be offered: the
 * catalog is recorded in history by a local activity, and every model call
 * carries it; 128 tools of 32 KB schemas (4 MB) passed what one payload may
 * hold, and the session failed.
 */
export const MAX_OFFERED_TOOL_BYTES = 384 * 1024;

/** The tools in catalog order (native tools first, then the servers in the config's order) while within both bounds; the rest named. */
function withinOfferBounds(tools: ToolCatalog['tools']): { kept: ToolCatalog['tools']; left: string[] } {
  const kept: ToolCatalog['tools'] = [];
  const left: string[] = [];
  let bytes = 0;
  for (const tool of tools) {
    const size = Buffer.byteLength(JSON.stringify(tool));
    if (kept.length >= MAX_OFFERED_TOOLS || bytes + size > MAX_OFFERED_TOOL_BYTES) {
      left.push(tool.name);
      continue;
    }
    kept.push(tool);
    bytes += size;
  }
  return { kept, left };
}

/** The catalog filtered by an allow-list and bounded, with its digest; computed once per catalog and allow-list. */
function offeredCatalog(catalog: ToolCatalog, allow: string[] | undefined, warn: (message: string) => void): ToolCatalog {
  const key = allow === undefined ? '*' : JSON.stringify(allow);
  let byAllow = digests.get(catalog);
  if (!byAllow) {
    byAllow = new Map();
    digests.set(catalog, byAllow);
  }
  let offered = byAllow.get(key);
  if (!offered) {
    const allowed = allow === undefined ? null : new Set(allow);
    const { kept: tools, left } = withinOfferBounds(allowed === null ? catalog.tools : catalog.tools.filter((t) => allowed.has(t.name)));
    if (left.length > 0) {
      warn(
        `${left.length} tool(s) are not offered: a model call takes at most ${MAX_OFFERED_TOOLS} tools and ${MAX_OFFERED_TOOL_BYTES} bytes of their definitions ` +
          `(left out: ${left.slice(0, 10).join(', ')}${left.length > 10 ? ` and ${left.length - 10} more` : ''}); narrow them with the servers' allowTools or the session's toolPolicy.allow`,
      );
    }
    offered = { version: catalog.version, tools, digest: hashOf(tools) };
    byAllow.set(key, offered);
  }
  return offered;
}

export function createToolActivities(deps: ToolActivityDeps) {
  return {
    async getToolCatalog(input: GetToolCatalogInput): Promise<ToolCatalog> {
      const offered = offeredCatalog(deps.tools.current().catalog, input.allow, (m) => Context.current().log.warn(m));
      if (input.knownDigest !== undefined && input.knownDigest === offered.digest) {
        return { version: offered.version, digest: offered.digest, tools: [], unchanged: true };
      }
      return offered;
    },

    async executeTool(input: ExecuteToolInput): Promise<ExecuteToolResult> {
      const ctx = Context.current();
      const tool = deps.tools.current().byName.get(input.toolName);
      if (!tool) {
        throw ApplicationFailure.nonRetryable(`No tool named ${input.toolName} is available on this worker now.`, FailureType.ToolNotFound);
      }
      // The call was planned, checked and maybe confirmed against the catalog its turn read; a server may have
      // changed the tool since (a refresh while a confirmation waited). Run it only as what was approved.
      const changed =
        input.toolHash !== undefined && tool.spec.hash !== input.toolHash
          ? 'its description or parameters are not the ones the call was checked against'
          : input.toolRisk !== undefined && RISK_RANK[tool.spec.risk] > RISK_RANK[input.toolRisk]
            ? `it now says it is ${tool.spec.risk}, where the call was planned as ${input.toolRisk}`
            : undefined;
      if (changed) throw ApplicationFailure.nonRetryable(`The tool ${input.toolName} changed after this call was planned (${changed}), so it was not run.`, FailureType.ToolChanged);
      // The workflow checked every keyword but `pattern`, which must not run there; RE2 checks it here, before the tool runs.
      const patternIssues = checkArgumentPatterns(input.arguments, tool.spec.parameters);
      if (patternIssues.length > 0) {
        const list = patternIssues.map((i) => `${i.path} ${i.message}`).join('; ');
        throw ApplicationFailure.nonRetryable(`Invalid arguments: ${list}. Expected ${briefSchema(tool.spec)}.`, FailureType.ToolInputInvalid);
      }
      const parsed = tool.parse(input.arguments);
      if (!parsed.ok) throw ApplicationFailure.nonRetryable(`Invalid arguments: ${parsed.message}`, FailureType.ToolInputInvalid);

      const started = Date.now();
      // Local activities (short read-only tools) have no server-side heartbeat; cancellation reaches them in-process.
      const heartbeat = ctx.info.isLocal ? () => undefined : () => ctx.heartbeat();
      const beat = setInterval(heartbeat, deps.heartbeatIntervalMs ?? 500);
      heartbeat();
      // Heartbeats go on until the activity returns: storing a long result (MongoDB slow or down, up to its server
      // selection timeout) takes longer than a 3 s heartbeat timeout, and a timed-out attempt would run the tool again.
      try {
        let value: unknown;
        try {
          value = await Promise.race([
            tool.run(parsed.value, {
              signal: ctx.cancellationSignal,
              idempotencyKey: input.idempotencyKey,
              sessionId: input.sessionId,
              turnId: input.turnId,
              toolCallId: input.toolCallId,
              namespace: input.namespace,
              heartbeat,
            }),
            // An executor that ignores its signal must still not outlive the cancellation.
            ctx.cancelled,
          ]);
        } catch (err) {
          if (ctx.cancellationSignal.aborted) {
            throw err instanceof CancelledFailure ? err : new CancelledFailure(`tool ${input.toolName} cancelled`);
          }
          throw toolFailure(err, input.toolName);
        }
        const whole = stringify(value);
        if (whole.length <= deps.maxResultChars) return { content: whole, truncated: false, durationMs: Date.now() - started };
        // The tool has run: nothing from here on may fail the activity, or a retry would run it again.
        let stored: 'whole' | 'start' | 'none' = whole.length <= MAX_STORED_RESULT_CHARS ? 'whole' : 'start';
        try {
          await deps.results.save(input.idempotencyKey, input.toolName, storedForm(whole), input.sessionId);
        } catch (err) {
          stored = 'none';
          Context.current().log.warn(`tool ${input.toolName}: its result (${whole.length} characters) could not be stored: ${err instanceof Error ? err.message : String(err)}`);
        }
        const cut = truncateForModel(whole, deps.maxResultChars, input.idempotencyKey, stored);
        return { content: cut.content, truncated: cut.truncated, durationMs: Date.now() - started };
      } finally {
        clearInterval(beat);
      }
    },
  };
}
