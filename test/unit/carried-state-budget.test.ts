import { CARRIED_STATE_HARD_BYTES, fitCarriedState, fitTurnsInput, fitView } from '../../workflows/carried-state-budget';
import type { Turn } from '../../workflows/session-types';
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

  it('cuts the longest texts of the conversation, each marked, when nothing else left to drop brings it under what the server takes', () => {
    // One turn, kept whole as the newest, with four tool results of 200,000 CJK characters: 2.4 MB of UTF-8.
    const big = '数'.repeat(200_000);
    const calls = [0, 1, 2, 3].map((i) => ({ id: `call_${i}`, type: 'function' as const, function: { name: 'local_read', arguments: '{}' } }));
    const turn = {
      turnId: 'turn-3',
      outcome: 'completed' as const,
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T00:00:01.000Z',
      messages: [
        { role: 'user' as const, content: 'read the four files' },
        { role: 'assistant' as const, content: null, tool_calls: calls },
        ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: big })),
        { role: 'assistant' as const, content: 'Read.' },
      ],
    };
    const over = { ...state(2, 10), context: { ...emptyContext(), window: [turn] } };
    expect(payloadBytes(over)).toBeGreaterThan(2 * 1024 * 1024);
    const { state: fitted, dropped } = fitCarriedState(over);
    expect(payloadBytes(fitted)).toBeLessThanOrEqual(CARRIED_STATE_HARD_BYTES);
    expect(dropped.at(-1)).toBe("the conversation's texts past 16000 characters (cut)");
    const messages = fitted.context.window[0]!.messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'tool', 'assistant']);
    for (const m of messages.filter((x) => x.role === 'tool')) {
      expect(m.content).toMatch(/^数{16000}… \[cut from 200000 characters: too long to carry into the session's next run\]$/);
    }
    // Short texts and the queue are as they were.
    expect(messages.at(-1)).toEqual({ role: 'assistant', content: 'Read.' });
    expect(fitted.queue).toEqual(over.queue);
  });
});

/** A turn of one tool call whose result is `chars` characters of 3 bytes. */
const turn = (i: number, chars: number): Turn => ({
  turnId: `turn-${i}`,
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T00:00:01.000Z',
  outcome: 'completed',
  messages: [
    { role: 'user', content: `question ${i}` },
    { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: `c${i}`, content: '数'.repeat(chars) },
    { role: 'assistant', content: `answer ${i}` },
  ],
});

describe('the turns a fold or a memory extraction is given', () => {
  const inputOf = (turns: Turn[]) => ({ turns });

  it('are left whole when they fit', () => {
    const turns = [turn(1, 100), turn(2, 100)];
    expect(fitTurnsInput(turns, inputOf)).toEqual({ turns, dropped: [] });
  });

  it('have their longest texts cut, marked, until the input fits: five turns of 200,000 characters in 3 bytes each', () => {
    const { turns, dropped } = fitTurnsInput([1, 2, 3, 4, 5].map((i) => turn(i, 200_000)), inputOf);
    expect(dropped).toEqual(['texts past 16000 characters (cut)']);
    expect(turns).toHaveLength(5);
    expect(turns[0]?.messages[2]?.content).toMatch(/^数{16000}… \[cut from 200000 characters: too long to send in one activity input\]$/);
    expect(turns[0]?.messages[3]?.content).toBe('answer 1');
    expect(payloadBytes(inputOf(turns))).toBeLessThanOrEqual(CARRIED_STATE_HARD_BYTES);
  });

  it('then are reduced to their first message and last answer, and last the oldest go', () => {
    const many = Array.from({ length: 400 }, (_, i) => turn(i, 2_000));
    const gist = fitTurnsInput(many, inputOf, 120_000);
    expect(gist.dropped).toEqual([...[16_000, 4_000, 1_000, 200].map((n) => `texts past ${n} characters (cut)`), 'every turn but its first message and last answer']);
    expect(gist.turns).toHaveLength(400);
    expect(gist.turns[0]?.messages).toEqual([{ role: 'user', content: 'question 0' }, { role: 'assistant', content: 'answer 0' }]);
    const fewer = fitTurnsInput(many, inputOf, 20_000);
    expect(fewer.dropped.at(-1)).toMatch(/^the \d+ oldest turn\(s\)$/);
    expect(fewer.turns.at(-1)?.turnId).toBe('turn-399');
    expect(payloadBytes(inputOf(fewer.turns))).toBeLessThanOrEqual(20_000);
  });
});

describe('the session view getSession answers', () => {
  const view = (turns: Turn[], answerChars: number) => ({ sessionId: 's', window: turns, lastTurn: { turnId: 't', text: 'a'.repeat(answerChars) } });

  it('is the same object when it fits', () => {
    const v = view([turn(1, 100)], 100);
    expect(fitView(v)).toEqual({ view: v, dropped: [] });
    expect(fitView(v).view).toBe(v);
  });

  it('has the window texts cut, then the last answer, then the oldest turns left out, until it fits; the newest turn stays', () => {
    const cut = fitView(view([1, 2, 3].map((i) => turn(i, 200_000)), 10), 1_000_000);
    expect(cut.dropped).toEqual(["the window's texts past 16000 characters (cut)"]);
    expect(cut.view.window[0]?.messages[2]?.content).toMatch(/^数{16000}… \[cut from 200000 characters: too long to show in one getSession answer; the session's events hold it whole\]$/);
    const all = fitView(view(Array.from({ length: 50 }, (_, i) => turn(i, 300)), 100_000), 20_000);
    expect(all.dropped).toEqual([
      ...[16_000, 4_000, 1_000, 200].map((n) => `the window's texts past ${n} characters (cut)`),
      "the last turn's answer past 16000 characters (cut)",
      expect.stringMatching(/^the window's \d+ oldest turn\(s\)$/),
    ]);
    expect(all.view.window.at(-1)?.turnId).toBe('turn-49');
    expect(all.view.lastTurn.text).toMatch(/^a{16000}… \[cut from 100000 characters/);
    expect(payloadBytes(all.view)).toBeLessThanOrEqual(20_000);
  });
});
