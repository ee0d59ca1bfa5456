import { z } from 'zod';
import { carriedStateProblem } from '../../workflows/carried-state-check';
import { AgentEvent } from '../../workflows/events';
import { describeZodError } from '../../workflows/input-guard';
import { DecideToolCallInput, InterruptInput, SendMessageInput, SessionOptions } from '../../workflows/session-types';

/*
 * The session's own schemas, fed values they accept and values they refuse,
 * run inside the sandbox by test/support/shared-zod-workflows.ts and outside
 * it by the test, which expects the same answers from both. Their checks
 * reach the kinds the warm-up in workflows/shared-libraries.ts builds and
 * more (prefaults, nullish transforms, carried state's tuples and records).
 */

const at = '2026-12-03T10:00:00.000Z';
const principal = { tenant: 't', user: 'u' };

const cases: Array<[string, z.ZodType, unknown]> = [
  ['options', SessionOptions, { sessionId: 's-1', namespace: principal }],
  ['options', SessionOptions, { sessionId: 'has space', namespace: { tenant: '' }, model: { temperature: 3 }, busyPolicy: 'wait' }],
  ['message', SendMessageInput, { text: 'hi', expectedVersion: 2, principal }],
  ['message', SendMessageInput, { text: '', expectedVersion: -1.5, waitForTurn: 'yes' }],
  ['decision', DecideToolCallInput, { toolCallId: 'c1', approved: true, principal }],
  ['decision', DecideToolCallInput, { toolCallId: 'x'.repeat(300), approved: 'no' }],
  ['interrupt', InterruptInput, null],
  ['interrupt', InterruptInput, { reason: 7 }],
];

const events: unknown[] = [
  { type: 'text_delta', sessionId: 's', at, turnId: 't1', step: 1, attempt: 1, delta: 'Hi' },
  { type: 'tool_call_start', sessionId: 's', at, turnId: 't1', step: 2, toolCallId: 'c1', toolName: 'add', argumentsPreview: 'x'.repeat(1_001) },
  { type: 'no_such_event', sessionId: 's', at },
];

const carried: unknown[] = [
  { status: 'active', version: 3, counters: { turns: 1, odd: null }, processed: [['m1', { turnId: 't1', version: 1 }]] },
  { status: 'lost', version: -1, queue: [{ turnId: 't2' }], processed: [['m1']], counters: { turns: 'many' } },
];

export interface CheckAnswer {
  what: string;
  ok: boolean;
  data?: unknown;
  issues?: string;
}

/** Each case through its schema (compiled and jitless paths), each event as the session publishes it, each carried state through the start check. */
export function runChecks(): CheckAnswer[] {
  const answers: CheckAnswer[] = [];
  for (const jitless of [false, true]) {
    for (const [what, schema, value] of cases) {
      const parsed = schema.safeParse(value, { jitless });
      answers.push(parsed.success ? { what, ok: true, data: parsed.data } : { what, ok: false, issues: `${describeZodError(parsed.error)} | ${z.prettifyError(parsed.error)}` });
    }
  }
  for (const event of events) {
    const parsed = AgentEvent.safeParse(event, { jitless: true });
    answers.push(parsed.success ? { what: 'event', ok: true, data: parsed.data } : { what: 'event', ok: false, issues: describeZodError(parsed.error) });
  }
  for (const state of carried) {
    const problem = carriedStateProblem(state);
    answers.push(problem === undefined ? { what: 'carried', ok: true } : { what: 'carried', ok: false, issues: problem });
  }
  return answers;
}
