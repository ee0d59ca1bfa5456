import { z } from 'zod';
import type { ExternalWhen, RiskLevel } from '../../workflows/tool-spec';
import type { UserNamespace } from '../../workflows/session-types';

/** What an executor gets besides its arguments. */
export interface ToolRunContext {
  /** Aborted when the turn is interrupted or the activity is cancelled. */
  signal: AbortSignal;
  /** `<sessionId>:<turnId>:<step>:<toolCallId>`: use it to make side effects happen once (models may reuse call ids across steps). */
  idempotencyKey: string;
  sessionId: string;
  /** The turn and the model's tool call this run belongs to (absent outside a session, e.g. in unit tests). */
  turnId?: string;
  toolCallId?: string;
  namespace: UserNamespace;
  /** Keeps the activity alive during long work; cheap to call often. */
  heartbeat(): void;
}

/**
 * A native tool, defined once: the model sees `local_<name>`, the
 * description and the JSON schema made from `parameters`; the worker runs
 * `execute` with arguments already validated by that same schema.
 */
export interface NativeTool<P extends z.ZodObject = z.ZodObject> {
  name: string;
  /** When to use it, when not to, defaults and formats with examples. */
  description: string;
  parameters: P;
  risk: RiskLevel;
  /** Makes a call `external` when this argument is present and not empty. */
  externalWhen?: ExternalWhen;
  /** Ask for confirmation even when the risk level alone would not. */
  requiresConfirmation?: boolean;
  /** Safe to run again with the same idempotency key; lets a side-effecting tool retry. */
  idempotent?: boolean;
  timeoutMs?: number;
  maxAttempts?: number;
  execute(args: z.infer<P>, ctx: ToolRunContext): Promise<unknown>;
}

export function defineTool<P extends z.ZodObject>(tool: NativeTool<P>): NativeTool<P> {
  return tool;
}

export const NATIVE_PREFIX = 'local_';
export const DEFAULT_TOOL_TIMEOUT_MS = 10_000;

/** Read tools may retry; side-effecting ones run once unless they are idempotent by key. */
export function defaultMaxAttempts(tool: Pick<NativeTool, 'risk' | 'idempotent' | 'maxAttempts'>): number {
  if (tool.maxAttempts !== undefined) return tool.maxAttempts;
  return tool.risk === 'read' || tool.idempotent ? 3 : 1;
}
