import { isTurnNote, planEviction, planUnfoldedCap, turnNote } from '../../workflows/context-window';
import { SessionContext } from '../../workflows/session-context';
import { extractKeyFacts, mergeKeyFacts } from '../../workflows/key-facts';
import { assemblePrompt } from '../../workflows/prompt-assembly';
import { emptySummary, fitSummaryLimits, SessionSummary } from '../../workflows/session-summary';
import type { Turn } from '../../workflows/session-types';
import type { ChatMessage } from '../../workflows/chat-message';

const turn = (n: number, messages?: ChatMessage[]): Turn => ({
  turnId: `turn-${n}`,
  messages: messages ?? [
    { role: 'user', content: `question ${n}` },
    { role: 'assistant', content: `answer ${n}` },
  ],
  outcome: 'completed',
  startedAt: '2026-01-01T00:00:00Z',
  endedAt: '2026-01-01T00:00:01Z',
});

describe('window eviction', () => {
  it('keeps the window under its turn limit, evicting a batch of whole turns', () => {
    const window = Array.from({ length: 21 }, (_, i) => turn(i + 1));
    const { keep, evict } = planEviction(window, { maxTurns: 20, maxTokens: 1e9, foldBatchTurns: 5 });
    expect(keep).toHaveLength(16);
    expect(evict.map((t) => t.turnId)).toEqual(['turn-1', 'turn-2', 'turn-3', 'turn-4', 'turn-5']);
  });

  it('evicts by token budget but never splits a turn, so a tool call stays with its result', () => {
    const big = 'x'.repeat(4000);
    const toolTurn = turn(1, [
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'local_x', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: big },
      { role: 'assistant', content: 'found' },
    ]);
    const { keep, evict } = planEviction([toolTurn, turn(2), turn(3)], { maxTurns: 20, maxTokens: 500, foldBatchTurns: 1 });
    expect(evict).toEqual([toolTurn]);
    expect(keep.map((t) => t.turnId)).toEqual(['turn-2', 'turn-3']);
  });

  it('always keeps the newest turn even if it alone is over budget', () => {
    const { keep } = planEviction([turn(1, [{ role: 'user', content: 'y'.repeat(10_000) }])], { maxTurns: 20, maxTokens: 100, foldBatchTurns: 1 });
    expect(keep).toHaveLength(1);
  });
});

describe('turns waiting for a fold', () => {
  const long = (n: number) => turn(n, [
    { role: 'user', content: `question ${n} ${'q'.repeat(400)}` },
    { role: 'assistant', content: `answer ${n} ${'a'.repeat(400)}` },
  ]);

  it('keeps the newest within the token budget and hands back the oldest to compact', () => {
    // Each long turn is about 210 tokens.
    const { keep, compact } = planUnfoldedCap([long(1), long(2), long(3)], 500);
    expect(compact.map((t) => t.turnId)).toEqual(['turn-1']);
    expect(keep.map((t) => t.turnId)).toEqual(['turn-2', 'turn-3']);
    expect(planUnfoldedCap([long(1), long(2)], 500).compact).toEqual([]);
    // One turn over the whole budget goes too: nothing unbounded stays.
    expect(planUnfoldedCap([long(1)], 200)).toEqual({ keep: [], compact: [long(1)] });
  });

  it('writes each compacted turn as one note the summary accepts, however long its id and text', () => {
    const note = turnNote(turn(7, [
      { role: 'user', content: `book   the\n\nroom ${'x'.repeat(5_000)}` },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'local_book', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'booked' },
      { role: 'assistant', content: 'Booked room 12.' },
    ]));
    expect(note).toMatch(/^Turn turn-7 \(2026-01-01, not summarized\): the user said "book the room x+…"; the answer began "Booked room 12\."\.$/);
    const worst = turnNote({ ...turn(1, [{ role: 'user', content: 'u'.repeat(9_000) }, { role: 'assistant', content: 'v'.repeat(9_000) }]), turnId: 't'.repeat(500) });
    expect(SessionSummary.safeParse({ ...emptySummary(), notes: [note, worst] }).success).toBe(true);
    expect(turnNote(turn(2, [{ role: 'user', content: '' }]))).toBe('Turn turn-2 (2026-01-01, not summarized): no user text.');
  });

  it('moves turns past the budget into the summary notes, dropping older such lines before the model\'s own notes', () => {
    const modelNotes = Array.from({ length: 12 }, (_, i) => `model note ${i}`);
    const earlier = Array.from({ length: 7 }, (_, i) => turnNote(turn(100 + i)));
    const context = new SessionContext(
      { window: [], unfolded: [long(1), long(2), long(3), long(4)], summary: { ...emptySummary(), notes: [...modelNotes.slice(0, 6), ...earlier, ...modelNotes.slice(6)] }, keyFacts: [] },
      { maxTurns: 1, maxTokens: 500, foldBatchTurns: 1 },
    );
    expect(context.unfoldedOverBudget).toBe(true);
    const { turns, noted } = context.capUnfolded();
    expect(turns.map((t) => t.turnId)).toEqual(['turn-1', 'turn-2']);
    expect(noted).toBe(2);
    expect(context.unfolded.map((t) => t.turnId)).toEqual(['turn-3', 'turn-4']);
    const notes = context.summary.notes;
    expect(notes).toHaveLength(20);
    // 12 + 7 + 2 = 21: the oldest line of an earlier compaction went, every note of the model stayed.
    expect(notes.filter((n) => n.startsWith('model note'))).toEqual(modelNotes);
    expect(notes.filter(isTurnNote).map((n) => n.slice(0, 9))).toEqual(['Turn turn', 'Turn turn', 'Turn turn', 'Turn turn', 'Turn turn', 'Turn turn', 'Turn turn', 'Turn turn']);
    expect(notes).not.toContain(earlier[0]);
    expect(notes.slice(-2)).toEqual([expect.stringMatching(/^Turn turn-1 /), expect.stringMatching(/^Turn turn-2 /)]);
    expect(context.unfoldedOverBudget).toBe(false);
    expect(context.capUnfolded()).toEqual({ turns: [], noted: 0 });
  });

  it('says how many compacted turns kept a line when more go at once than the notes hold', () => {
    const context = new SessionContext(
      { window: [], unfolded: Array.from({ length: 25 }, (_, i) => long(i + 1)), summary: { ...emptySummary(), notes: ['the model\'s note'] }, keyFacts: [] },
      { maxTurns: 1, maxTokens: 200, foldBatchTurns: 1 },
    );
    const { turns, noted } = context.capUnfolded();
    expect(turns).toHaveLength(25);
    // 1 + 25 lines: six of the compacted ones (the oldest) cannot stay.
    expect(noted).toBe(19);
    expect(context.summary.notes[0]).toBe('the model\'s note');
    expect(SessionSummary.safeParse(context.summary).success).toBe(true);
  });
});

describe('summary limits', () => {
  it('brings a summary the model made too long within the schema: newest items of a list, first options, items cut', () => {
    const notes = Array.from({ length: 23 }, (_, i) => `note ${i}`);
    const fitted = fitSummaryLimits({ ...emptySummary(), notes, decisions: ['', 'd'.repeat(500)], optionLists: [{ topic: 't', options: Array.from({ length: 25 }, (_, i) => `o${i}`) }], identifiers: [{ label: 'id', value: 'v'.repeat(300) }] }) as SessionSummary;
    expect(SessionSummary.safeParse(fitted).success).toBe(true);
    expect(fitted.notes).toEqual(notes.slice(3));
    expect(fitted.decisions).toEqual([`${'d'.repeat(399)}…`]);
    expect(fitted.optionLists[0]?.options).toEqual(Array.from({ length: 20 }, (_, i) => `o${i}`));
    expect(fitted.identifiers[0]?.value).toHaveLength(200);
  });

  it('leaves wrong types to the schema, which still refuses them', () => {
    expect(SessionSummary.safeParse(fitSummaryLimits({ userProfile: 'not a list' })).success).toBe(false);
    expect(SessionSummary.safeParse(fitSummaryLimits({ notes: [7] })).success).toBe(false);
    expect(fitSummaryLimits('text')).toBe('text');
  });
});

describe('key facts', () => {
  it('pins deadlines, ticket ids, changed rules and ids from tool results', () => {
    const facts = extractKeyFacts(
      [
        { role: 'user', content: 'The report deadline is 2026-12-24. Track it under OPS-1432. From now on, answer in French.' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'local_create_meeting', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ created: true, meeting: { meetingId: 'mtg_0123456789ab' } }) },
      ],
      'turn-1',
      '2026-01-01T00:00:00Z',
    );
    const bySubject = Object.fromEntries(facts.map((f) => [f.subject, f.value]));
    expect(bySubject.deadline).toMatch(/2026-12-24/);
    expect(bySubject['ticket ops']).toBe('OPS-1432');
    expect(bySubject['rule: language']).toMatch(/answer in French/);
    expect(bySubject['meetingid (local_create_meeting)']).toBe('mtg_0123456789ab');
  });

  it('lets a newer value replace an older one for the same subject, and stays bounded', () => {
    const first = extractKeyFacts([{ role: 'user', content: 'From now on, answer in French.' }], 'turn-1', 't1');
    const second = extractKeyFacts([{ role: 'user', content: 'Actually, from now on answer in English.' }], 'turn-2', 't2');
    const merged = mergeKeyFacts(first, second);
    expect(merged.filter((f) => f.subject === 'rule: language')).toEqual([expect.objectContaining({ value: 'Actually, from now on answer in English.', turnId: 'turn-2' })]);
    const many = Array.from({ length: 30 }, (_, i) => ({ subject: `s${i}`, value: 'v', turnId: 't', updatedAt: 'x', source: 'user' as const }));
    expect(mergeKeyFacts([], many, { maxFacts: 20, maxValueChars: 200 })).toHaveLength(20);
  });

  it('does not invent facts from small talk', () => {
    expect(extractKeyFacts([{ role: 'user', content: 'Thanks, that was helpful! Have a nice day.' }], 'turn-1', 't')).toEqual([]);
  });
});

describe('prompt assembly', () => {
  it('orders regions system, key facts, summary, memories, then the raw turns, each labelled', () => {
    const summary = { ...emptySummary(), optionLists: [{ topic: 'Hotels in Lyon', options: ['Hotel Azur', 'Le Parc', 'Maison Rouge'] }] };
    const messages = assemblePrompt({
      systemPrompt: 'SYSTEM',
      keyFacts: [{ subject: 'deadline', value: 'due 2026-12-24', turnId: 'turn-1', updatedAt: 'x', source: 'user' }],
      summary,
      recalledMemories: { strong: ['[mem:ab12] preference, 3 weeks ago: prefers concise answers'], weak: ['[mem:cd34] fact, 2 months ago: may live in Lyon'] },
      unfolded: [turn(1)],
      window: [turn(2)],
      current: [{ role: 'user', content: 'now' }],
    });
    const system = messages[0]!.content as string;
    const order = ['SYSTEM', '## Key facts', '## Summary of the earlier conversation', '## Recalled memories', '## Current conversation'].map((s) => system.indexOf(s));
    expect(order.every((pos, i) => pos >= 0 && (i === 0 || pos > order[i - 1]!))).toBe(true);
    expect(system).toContain('  3. Maison Rouge');
    expect(system).toContain('Tentative (the user may have said this');
    expect(messages.slice(1).map((m) => m.content)).toEqual(['question 1', 'answer 1', 'question 2', 'answer 2', 'now']);
  });

  it('leaves out empty regions', () => {
    const messages = assemblePrompt({ systemPrompt: 'S', keyFacts: [], summary: emptySummary(), recalledMemories: { strong: [], weak: [] }, unfolded: [], window: [], current: [] });
    expect(messages[0]!.content).toBe('S\n\n## Current conversation\nThe messages after this one are the most recent turns, verbatim, oldest first.');
  });
});
