import { fitCarriedState } from '../../workflows/carried-state-budget';
import { payloadBytes } from '../../workflows/payload-budget';
import { emptyContext } from '../../workflows/session-context';
import { emptyCounters } from '../../workflows/session-types';
import type { CarriedState } from '../../workflows/session-state';

const state = (logItems: number, resultChars: number): CarriedState => ({
  status: 'active',
  createdAt: '2026-01-01T00:00:00.000Z',
  version: 3,
  baseVersion: 0,
  turnSeq: 3,
  context: emptyContext(),
  counters: emptyCounters(),
  queue: [{ turnId: 'turn-4', text: 'next', receivedAt: '2026-01-01T00:00:00.000Z' }],
  processed: [],
  recentResults: Array.from({ length: 20 }, (_, i) => ({ turnId: `turn-${i}`, outcome: 'completed' as const, text: 'r'.repeat(resultChars), modelCalls: 1, toolCalls: 0 })),
  toolRecords: [],
  toolHashes: [],
  pendingExtraction: [],
  stream: { log: Array.from({ length: logItems }, () => ({ topic: 'events', data: 'x'.repeat(10_000), offset: 0 })), base_offset: 7, publisher_sequences: {}, publisher_last_seen: {} },
});

describe('the state carried across continue-as-new', () => {
  it('is left whole when it fits', () => {
    const small = state(2, 10);
    expect(fitCarriedState(small)).toEqual({ state: small, dropped: [] });
  });

  it('drops old events first, keeping offsets continuous, and keeps the queue and counters', () => {
    const { state: fitted, dropped } = fitCarriedState(state(80, 10), 100_000);
    expect(dropped).toEqual(['the event log']);
    expect(fitted.stream).toMatchObject({ log: [], base_offset: 87 });
    expect(fitted.queue).toHaveLength(1);
    expect(payloadBytes(fitted)).toBeLessThanOrEqual(100_000);
  });

  it('then drops older turn results until it fits', () => {
    const { state: fitted, dropped } = fitCarriedState(state(10, 20_000), 150_000);
    expect(dropped).toEqual(['the event log', 'older turn results']);
    expect(fitted.recentResults.map((r) => r.turnId)).toEqual(['turn-15', 'turn-16', 'turn-17', 'turn-18', 'turn-19']);
  });
});
