import type { AgentClient } from '../../client/agent-client';
import { FINAL_TEXT } from './bench-model';
import { SessionContender } from './session-contender';
import { auditTurns, type TurnAudit } from './turn-audit';

/** What a batch of sessions run side by side came to. */
export interface BatchResult {
  /** Wall time of every turn that came back as scripted, in ms. */
  turnMs: number[];
  /** Turns whose call threw or whose result was not as scripted. */
  failures: number;
  /** First few failure messages, for the report. */
  errors: string[];
  /** The sessions' event streams, read whole once every turn came back. */
  audit: TurnAudit;
  wallMs: number;
}

/**
 * `sessions` sessions at once, each sending `turns` turns of `steps` steps one
 * after another, then their streams audited and the sessions ended.
 * `onTurn` hears of every finished turn (for a kill mid-run); `beforeEnd`
 * runs while the sessions, all turns done, are still open (and cached). A
 * turn that does not come back within `turnTimeoutMs` counts as failed.
 */
export async function runBatch(
  agent: AgentClient,
  prefix: string,
  shape: { sessions: number; turns: number; steps: number; turnTimeoutMs: number },
  hooks: { onTurn?: (done: number) => void; beforeEnd?: () => Promise<void> } = {},
): Promise<BatchResult> {
  const contenders = Array.from({ length: shape.sessions }, (_, i) => new SessionContender(agent, `${prefix}-${i + 1}`, shape.steps, shape.turns));
  const result: BatchResult = { turnMs: [], failures: 0, errors: [], audit: { good: 0, missing: 0, duplicated: 0, incomplete: 0, unverified: 0 }, wallMs: 0 };
  let done = 0;
  const started = performance.now();
  await Promise.all(
    contenders.map(async (contender, i) => {
      for (let t = 1; t <= shape.turns; t++) {
        try {
          result.turnMs.push(await withTimeout(contender.turn(`session ${i + 1} turn ${t}`), shape.turnTimeoutMs));
        } catch (err) {
          result.failures++;
          note(result, err instanceof Error ? err.message : String(err));
        }
        hooks.onTurn?.(++done);
      }
    }),
  );
  result.wallMs = performance.now() - started;
  // Read while the sessions still run: a closed session's events come from its archive, which a loaded MongoDB may write late.
  const audits = await Promise.all(
    contenders.flatMap((c) => c.all).map((sessionId) =>
      auditWithRetries(agent, sessionId, { turns: shape.turns, toolSteps: shape.steps - 1, finalText: FINAL_TEXT }).catch((err: unknown): TurnAudit => {
        // A stream that cannot be read proves none of its turns, nor disproves them.
        note(result, `reading the events of ${sessionId}: ${err instanceof Error ? err.message : String(err)}`);
        return { good: 0, missing: 0, duplicated: 0, incomplete: 0, unverified: shape.turns };
      }),
    ),
  );
  await hooks.beforeEnd?.();
  await Promise.all(contenders.map((c) => c.endAll()));
  for (const a of audits) {
    result.audit.good += a.good;
    result.audit.missing += a.missing;
    result.audit.duplicated += a.duplicated;
    result.audit.incomplete += a.incomplete;
    result.audit.unverified += a.unverified;
  }
  return result;
}

/** A read can time out while the worker is saturated (a query waits for a workflow task): try again before giving up. */
async function auditWithRetries(agent: AgentClient, sessionId: string, expected: Parameters<typeof auditTurns>[2], attempts = 3): Promise<TurnAudit> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await auditTurns(agent, sessionId, expected);
    } catch (err) {
      if (attempt >= attempts) throw err;
    }
  }
}

function note(result: BatchResult, message: string): void {
  if (result.errors.length < 8) result.errors.push(message);
}

/** Turns lost by the audit's reckoning: never answered, answered twice, or answered incompletely. */
export const lostTurns = (a: TurnAudit): number => a.missing + a.duplicated + a.incomplete;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
