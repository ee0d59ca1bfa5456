import { defaultThresholds, OfflineEmbedder } from '../../activities/memory/embedder';
import { defaultMemoryConfig } from '../../activities/memory/memory-config';
import { queryScorer } from '../../activities/memory/recall';
import { EN_RECALL_SET, MemoryState, namespaceLabel, RECALL_SETS, ZH_RECALL_SET, type RecallSet } from '../../evaluation/recall-set';
import { sharedChineseCharacters, sharedEnglishWords } from '../../evaluation/recall-set/content-overlap';
import { embedSet, qualityFigures, scoreCases, tierCase, type CaseOutcome, type SetVectors } from '../../evaluation/recall-set/recall-set-quality';

const now = new Date('2026-06-01T12:00:00Z');
const embedder = new OfflineEmbedder();
const config = defaultMemoryConfig();
const thresholds = defaultThresholds(embedder.id);
const policy = { strong: thresholds.strong, weak: thresholds.weak, maxStrong: config.maxStrong, maxStrongChars: config.maxStrongChars, maxWeak: config.maxWeak, maxWeakChars: config.maxWeakChars };

function memory(set: RecallSet, id: string) {
  const m = set.memories.find((x) => x.id === id);
  if (!m) throw new Error(`no memory ${id}`);
  return m;
}

describe('the labelled recall set', () => {
  it('has at least 200 English and 100 Chinese cases, some with nothing to recall', () => {
    expect(EN_RECALL_SET.cases.length).toBeGreaterThanOrEqual(200);
    expect(ZH_RECALL_SET.cases.length).toBeGreaterThanOrEqual(100);
    for (const set of RECALL_SETS) {
      const unanswerable = set.cases.filter((c) => c.expected.length === 0).length;
      expect(unanswerable / set.cases.length).toBeGreaterThanOrEqual(0.05);
    }
  });

  it('has unique ids, and every expected id is a live memory of the case namespace', () => {
    const memoryIds = RECALL_SETS.flatMap((s) => s.memories.map((m) => m.id));
    const caseIds = RECALL_SETS.flatMap((s) => s.cases.map((c) => c.id));
    expect(new Set(memoryIds).size).toBe(memoryIds.length);
    expect(new Set(caseIds).size).toBe(caseIds.length);
    const problems: string[] = [];
    for (const set of RECALL_SETS) {
      for (const c of set.cases) {
        for (const id of c.expected) {
          const m = set.memories.find((x) => x.id === id);
          if (!m) problems.push(`${c.id}: ${id} does not exist`);
          else if (m.state !== MemoryState.Live) problems.push(`${c.id}: ${id} is ${m.state}`);
          else if (namespaceLabel(m.namespace) !== namespaceLabel(c.namespace)) problems.push(`${c.id}: ${id} is in another namespace`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('holds stale, superseded, deleted and other-namespace memories in each language, superseded ones pointing at a live memory', () => {
    for (const set of RECALL_SETS) {
      const caseNamespaces = new Set(set.cases.map((c) => namespaceLabel(c.namespace)));
      expect(set.memories.filter((m) => m.state === MemoryState.Stale).length).toBeGreaterThanOrEqual(5);
      expect(set.memories.filter((m) => m.state === MemoryState.Deleted).length).toBeGreaterThanOrEqual(5);
      expect(set.memories.filter((m) => !caseNamespaces.has(namespaceLabel(m.namespace))).length).toBeGreaterThanOrEqual(10);
      const superseded = set.memories.filter((m) => m.state === MemoryState.Superseded);
      expect(superseded.length).toBeGreaterThanOrEqual(5);
      for (const m of superseded) {
        const by = memory(set, m.supersededBy ?? '');
        expect({ id: m.id, state: by.state, ns: namespaceLabel(by.namespace) }).toEqual({ id: m.id, state: MemoryState.Live, ns: namespaceLabel(m.namespace) });
      }
    }
  });

  it('never repeats a text of the same kind within a namespace (the store derives ids from it)', () => {
    for (const set of RECALL_SETS) {
      const keys = set.memories.map((m) => `${namespaceLabel(m.namespace)}|${m.kind}|${m.text}`);
      expect(new Set(keys).size).toBe(keys.length);
    }
  });

  it('shares no content word between an English query and the memories it expects', () => {
    const overlaps = EN_RECALL_SET.cases.flatMap((c) =>
      c.expected.map((id) => ({ c: c.id, shared: sharedEnglishWords(c.query, memory(EN_RECALL_SET, id).text) })).filter((o) => o.shared.length > 0),
    );
    expect(overlaps).toEqual([]);
  });

  it('shares no content character between a Chinese query and the memories it expects', () => {
    const overlaps = ZH_RECALL_SET.cases.flatMap((c) =>
      c.expected.map((id) => ({ c: c.id, shared: sharedChineseCharacters(c.query, memory(ZH_RECALL_SET, id).text) })).filter((o) => o.shared.length > 0),
    );
    expect(overlaps).toEqual([]);
    // The check itself sees what it should: 家乡 against 家乡, not 我/的/是 or 用户.
    expect(sharedChineseCharacters('我的家乡是哪里？', '用户的家乡是成都。')).toEqual(['家', '乡']);
    expect(sharedChineseCharacters('我的家乡是哪里？', '用户在波尔图长大。')).toEqual([]);
  });
});

describe('the recall set through the real ranking, with the offline embedder', () => {
  let outcomes: Map<string, CaseOutcome>;
  let vectors: SetVectors;
  beforeAll(async () => {
    vectors = await embedSet(EN_RECALL_SET, embedder);
    outcomes = new Map(scoreCases(EN_RECALL_SET, vectors, now).map((s) => [s.caseId, tierCase(EN_RECALL_SET, s, policy, now)]));
    const zhVectors = await embedSet(ZH_RECALL_SET, embedder);
    for (const s of scoreCases(ZH_RECALL_SET, zhVectors, now)) outcomes.set(s.caseId, tierCase(ZH_RECALL_SET, s, policy, now));
  });

  const caseId = (query: string) => {
    const c = [...EN_RECALL_SET.cases, ...ZH_RECALL_SET.cases].find((x) => x.query === query);
    if (!c) throw new Error(`no case "${query}"`);
    return c.id;
  };
  const similarity = (query: string, id: string) => queryScorer(vectors.query.get(query) ?? [])(vectors.memory.get(memory(EN_RECALL_SET, id).text) ?? new Float32Array());

  it('never returns a stale, superseded, deleted or other-namespace memory', () => {
    const figures = RECALL_SETS.map((set) => qualityFigures(set, set.cases.map((c) => outcomes.get(c.id) as CaseOutcome)));
    expect(figures.map((f) => f.forbidden_returned)).toEqual([0, 0]);
  });

  it('keeps out ended memories that match the words, which would otherwise be strong', () => {
    const traps: Array<[string, string]> = [
      ['Do I want long, detailed explanations?', 'en.ana.style-old'],
      ['Is my ski trip to Andorra coming up?', 'en.ana.ski'],
      ['What is my bank PIN hint?', 'en.ana.pin'],
      ['Am I camping in Snowdonia?', 'en.bruno.camping'],
    ];
    for (const [query, ended] of traps) {
      expect({ query, strong: similarity(query, ended) >= policy.strong }).toEqual({ query, strong: true });
      const o = outcomes.get(caseId(query)) as CaseOutcome;
      expect([...o.strong, ...o.weak]).not.toContain(ended);
      expect(o.strong).toEqual([]);
    }
  });

  it('finds the near-topic distractor that shares words, not the paraphrased memory (what word hashing cannot do)', () => {
    expect(outcomes.get(caseId('Which town did I spend my childhood in?'))).toMatchObject({ strong: ['en.ana.d-friend'], weak: [] });
    expect(outcomes.get(caseId("What's my pup's name?"))).toMatchObject({ strong: [], weak: ['en.ana.d-pup'] });
    expect(outcomes.get(caseId('When does my plane leave for Germany?'))).toMatchObject({ strong: [], weak: ['en.ana.d-plane'] });
    // A stem fragment ("liv-") is enough for word hashing to state the wrong fact as remembered.
    expect(outcomes.get(caseId('What do I do for a living?'))?.strong).toEqual(['en.ana.residence']);
  });

  it('scores near zero on paraphrases in both languages', () => {
    for (const set of RECALL_SETS) {
      const f = qualityFigures(set, set.cases.map((c) => outcomes.get(c.id) as CaseOutcome));
      expect(f.top1_accuracy).toBeLessThan(0.05);
      expect(f.recall_at_5).toBeLessThan(0.05);
    }
  });
});
