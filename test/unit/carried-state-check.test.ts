import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { carriedStateProblem } from '../../workflows/carried-state-check';
import { emptySummary } from '../../workflows/session-summary';

/** Every carried state in the replay corpus: the inputs of runs started by continue-as-new, and those the runs continued with. */
function corpusCarriedStates(): Array<{ file: string; carried: unknown }> {
  const dir = join(__dirname, '../replay/histories');
  const found: Array<{ file: string; carried: unknown }> = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const history = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { events: Array<Record<string, { input?: { payloads?: Array<{ data?: string }> } }>> };
    for (const event of history.events) {
      const attributes = event.workflowExecutionStartedEventAttributes ?? event.workflowExecutionContinuedAsNewEventAttributes;
      for (const payload of attributes?.input?.payloads ?? []) {
        const input = JSON.parse(Buffer.from(payload.data ?? '', 'base64').toString('utf8')) as { carried?: unknown };
        if (input?.carried !== undefined) found.push({ file, carried: input.carried });
      }
    }
  }
  return found;
}

describe('carried state check', () => {
  it('passes every carried state the workflow wrote in the replay corpus', () => {
    const states = corpusCarriedStates();
    expect(states.length).toBeGreaterThanOrEqual(4);
    for (const { file, carried } of states) expect({ file, problem: carriedStateProblem(carried) }).toEqual({ file, problem: undefined });
  });

  it('passes no state (absent or null), an empty one, and fields it does not know (written by a later version)', () => {
    expect(carriedStateProblem(undefined)).toBeUndefined();
    expect(carriedStateProblem(null)).toBeUndefined();
    expect(carriedStateProblem({})).toBeUndefined();
    expect(carriedStateProblem({ version: 3, somethingNew: { deep: [1] }, context: { window: [], unfolded: [], summary: { ...emptySummary(), later: 1 }, keyFacts: [], more: true } })).toBeUndefined();
  });

  it.each([
    ['a string', 'junk', /^\(input\): /],
    ['a list', [], /^\(input\): /],
    ['context not an object', { context: 'junk' }, /^context: /],
    ['a window that is not a list', { context: { window: 'x', unfolded: [], summary: {}, keyFacts: [] } }, /^context\.window: /],
    ['a turn message without a role the API knows', { context: { window: [{ turnId: 't', messages: [{ role: 'robot' }], outcome: 'completed', startedAt: '', endedAt: '' }], unfolded: [], summary: {}, keyFacts: [] } }, /^context\.window\.0\.messages\.0\.role: /],
    ['a counter that is not a number', { counters: { turns: 'x' } }, /^counters\.turns: /],
    ['a queued message without text', { queue: [{ turnId: 't', receivedAt: '' }] }, /^queue\.0\.text: /],
    ['processed not a list of pairs', { processed: 'x' }, /^processed: /],
    ['a stream log that is not a list', { stream: { log: 'x', base_offset: 0 } }, /^stream\.log: /],
    ['a version that is not a whole number', { version: 'x' }, /^version: /],
    ['a negative turn sequence', { turnSeq: -1 }, /^turnSeq: /],
    ['tool hashes not a list', { toolHashes: 5 }, /^toolHashes: /],
    ['a summary without its notes (the code reads every list)', { context: { window: [], unfolded: [], summary: { ...emptySummary(), notes: undefined }, keyFacts: [] } }, /^context\.summary\.notes: /],
    ['an unknown status', { status: 'sleeping' }, /^status: /],
    ['an owner without a user', { owner: { tenant: 'a' } }, /^owner\.user: /],
    ['an end request that is not a boolean', { endRequested: 'yes' }, /^endRequested: /],
    ['an end request of null', { endRequested: null }, /^endRequested: /],
    ['an end request that is a huge nested object', { endRequested: JSON.parse(`${'{"a":'.repeat(500)}1${'}'.repeat(500)}`) as unknown }, /^endRequested: /],
  ])('names what is wrong: %s', (_name, carried, expected) => {
    expect(carriedStateProblem(carried)).toMatch(expected);
  });

  it('passes a counter carried as null, as some early versions wrote one their predecessor lacked', () => {
    expect(carriedStateProblem({ counters: { turns: 3, summaryFailures: null } })).toBeUndefined();
  });

  it('passes a stream log entry with a topic that is not a string, as hostile publishes before events-from-workflow-only left them', () => {
    expect(carriedStateProblem({ stream: { log: [{ topic: 7, data: '', offset: 0 }], base_offset: 0, publisher_sequences: { x: 'y' } } })).toBeUndefined();
    expect(carriedStateProblem({ stream: { log: [{ topic: 'events', data: 7 }], base_offset: 0 } })).toMatch(/^stream\.log\.0\.data: /);
  });

  it('passes an end request carried by a run that continued as new (end-request-carried)', () => {
    expect(carriedStateProblem({ endRequested: true, queue: [{ turnId: 't', text: 'last', receivedAt: '' }] })).toBeUndefined();
  });

  it('leaves a junk fold backoff to the run, which reads it as no failures', () => {
    expect(carriedStateProblem({ foldBackoff: { failures: 'many', skip: -1e9 } })).toBeUndefined();
  });
});
