import type { AgentClient } from '../../client/agent-client';
import type { AgentEvent } from '../../workflows/events';

/** What one session's event stream says about its turns. */
export interface TurnAudit {
  /** Turns that completed once, with the scripted answer streamed whole and every tool step's result once. */
  good: number;
  /** Expected turns with no `turn_completed` at all. */
  missing: number;
  /** Turns that completed more than once. */
  duplicated: number;
  /** Turns that completed once but not as scripted (outcome, text, streamed deltas or tool results). */
  incomplete: number;
  /** Turns of sessions whose stream could not be read: neither proven nor disproven. */
  unverified: number;
}

interface TurnTrace {
  completions: Array<{ outcome: string; text: string }>;
  /** Per step: the highest attempt that streamed, and what that attempt streamed. */
  deltas: Map<number, { attempt: number; text: string }>;
  /** Per step: tool results seen, and whether each was ok. */
  toolResults: Map<number, boolean[]>;
}

/**
 * Reads an idle session's event stream from the start and checks each turn
 * against the script: `toolSteps` no-op tool steps then `finalText`. Call it
 * once every turn sent has come back: the reader stops when the stream has
 * been quiet for `quietMs` after the expected completions (a turn run twice
 * would have published by then), or after `timeoutMs`. A model call retried
 * after a crash streams again under a new attempt, which renderers restart
 * on, so only the last attempt of a step counts.
 */
export async function auditTurns(
  agent: AgentClient,
  sessionId: string,
  expected: { turns: number; toolSteps: number; finalText: string },
  { quietMs = 2_000, timeoutMs = 60_000 } = {},
): Promise<TurnAudit> {
  const turns = new Map<string, TurnTrace>();
  const trace = (turnId: string): TurnTrace => {
    let t = turns.get(turnId);
    if (!t) turns.set(turnId, (t = { completions: [], deltas: new Map(), toolResults: new Map() }));
    return t;
  };
  const stop = new AbortController();
  const deadline = setTimeout(() => stop.abort(), timeoutMs);
  let quiet: NodeJS.Timeout | undefined;
  let completions = 0;
  const expectQuiet = () => {
    clearTimeout(quiet);
    if (completions >= expected.turns) quiet = setTimeout(() => stop.abort(), quietMs);
  };
  try {
    for await (const { event } of agent.events(sessionId, { signal: stop.signal })) {
      if (event.type === 'turn_completed') completions++;
      expectQuiet();
      record(trace, event);
    }
  } finally {
    clearTimeout(deadline);
    clearTimeout(quiet);
  }
  return verdicts(turns, expected);
}

function record(trace: (turnId: string) => TurnTrace, event: AgentEvent): void {
  switch (event.type) {
    case 'text_delta': {
      const steps = trace(event.turnId).deltas;
      const seen = steps.get(event.step);
      if (!seen || event.attempt > seen.attempt) steps.set(event.step, { attempt: event.attempt, text: event.delta });
      else if (event.attempt === seen.attempt) seen.text += event.delta;
      break;
    }
    case 'tool_call_result': {
      const results = trace(event.turnId).toolResults;
      results.set(event.step, [...(results.get(event.step) ?? []), event.ok]);
      break;
    }
    case 'turn_completed':
      trace(event.turnId).completions.push({ outcome: event.outcome, text: event.text });
      break;
    default:
      break;
  }
}

function verdicts(turns: Map<string, TurnTrace>, expected: { turns: number; toolSteps: number; finalText: string }): TurnAudit {
  const audit: TurnAudit = { good: 0, missing: 0, duplicated: 0, incomplete: 0, unverified: 0 };
  let completed = 0;
  for (const t of turns.values()) {
    if (t.completions.length === 0) continue;
    completed++;
    if (t.completions.length > 1) {
      audit.duplicated++;
      continue;
    }
    const [done] = t.completions as [{ outcome: string; text: string }];
    const finalStep = Math.max(0, ...t.deltas.keys());
    const toolSteps = [...t.toolResults.values()];
    const asScripted =
      done.outcome === 'completed' &&
      done.text === expected.finalText &&
      t.deltas.get(finalStep)?.text === expected.finalText &&
      toolSteps.length === expected.toolSteps &&
      toolSteps.every((results) => results.length === 1 && results[0] === true);
    if (asScripted) audit.good++;
    else audit.incomplete++;
  }
  audit.missing = Math.max(0, expected.turns - completed);
  return audit;
}
