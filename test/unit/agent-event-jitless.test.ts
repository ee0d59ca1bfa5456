import { AgentEvent } from '../../workflows/events';

/*
 * The session validates each event it publishes without zod's compiled fast
 * path (`jitless`): in the workflow sandbox every run builds its schemas
 * anew, so the compiled parsers were made again per run and ran cold
 * (docs/performance.md). What it accepts, refuses and keeps must be what the
 * compiled path gives.
 */

const at = '2026-12-02T10:00:00.000Z';
const valid: unknown[] = [
  { type: 'text_delta', sessionId: 's', at, turnId: 't1', step: 1, attempt: 1, delta: 'Hi' },
  { type: 'tool_call_start', sessionId: 's', at, turnId: 't1', step: 2, toolCallId: 'c1', toolName: 'add', argumentsPreview: '{"a":1}' },
  { type: 'tool_call_result', sessionId: 's', at, turnId: 't1', step: 2, toolCallId: 'c1', toolName: 'add', ok: false, preview: 'no', errorType: 'ToolFailed', durationMs: 3 },
  { type: 'turn_completed', sessionId: 's', at, turnId: 't1', outcome: 'completed', text: 'Done.', version: 4 },
  { type: 'error', sessionId: 's', at, errorType: 'ModelUnavailable', message: 'down' },
  { type: 'citation_flagged', sessionId: 's', at, turnId: 't1', unknownIds: ['m9'], action: 'removed' },
];
const invalid: unknown[] = [
  { type: 'text_delta', sessionId: 's', at, turnId: 't1', step: 1, attempt: 0, delta: 'Hi' },
  { type: 'tool_call_start', sessionId: 's', at, turnId: 't1', step: 2, toolCallId: 'c1', toolName: 'add', argumentsPreview: 'x'.repeat(1_001) },
  { type: 'turn_completed', sessionId: 's', at, turnId: 't1', outcome: 'completed', text: 'Done.', version: 1.5 },
  { type: 'citation_flagged', sessionId: 's', at, turnId: 't1', unknownIds: ['m9'], action: 'kept' },
  { type: 'no_such_event', sessionId: 's', at },
  { sessionId: 's', at },
  'text_delta',
  null,
];

describe('AgentEvent without the compiled fast path', () => {
  test.each(valid.map((event) => [(event as { type: string }).type, event]))('accepts a %s event as the compiled path does', (_type, event) => {
    const compiled = AgentEvent.safeParse(event);
    const jitless = AgentEvent.safeParse(event, { jitless: true });
    expect(compiled.success).toBe(true);
    expect(jitless.success).toBe(true);
    expect(jitless.data).toEqual(compiled.data);
  });

  test('drops unknown keys as the compiled path does', () => {
    const event = { ...(valid[0] as object), secret: 'never streamed' };
    const jitless = AgentEvent.safeParse(event, { jitless: true });
    expect(jitless.success).toBe(true);
    expect(jitless.data).not.toHaveProperty('secret');
    expect(jitless.data).toEqual(AgentEvent.safeParse(event).data);
  });

  test.each(invalid.map((event, i) => [i, event]))('refuses invalid event #%i as the compiled path does, with the same issues', (_i, event) => {
    const compiled = AgentEvent.safeParse(event);
    const jitless = AgentEvent.safeParse(event, { jitless: true });
    expect(compiled.success).toBe(false);
    expect(jitless.success).toBe(false);
    expect(jitless.error?.issues.map((i) => [i.code, i.path.join('.')])).toEqual(compiled.error?.issues.map((i) => [i.code, i.path.join('.')]));
  });
});
