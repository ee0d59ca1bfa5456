import { defaultThresholds } from '../../activities/memory/embedder';
import { LocalEmbedder } from '../../activities/memory/local-embedder';
import type { LocalModelName } from '../../activities/memory/local-models';
import { defaultMemoryConfig } from '../../activities/memory/memory-config';
import { queryScorer } from '../../activities/memory/recall';
import { EN_RECALL_SET, ZH_RECALL_SET, type RecallSet } from '../../evaluation/recall-set';
import { embedSet, qualityFigures, scoreCases, tierCase, type CaseOutcome } from '../../evaluation/recall-set/recall-set-quality';

/**
 * One person of each language's labelled recall set through the real
 * ranking with the real models (fetched by Jest's global setup; ONNX on CPU
 * is deterministic), at the thresholds calibrated for them. The whole sets
 * are measured by `npm run bench:memory`; this pins one slice exactly.
 */
const now = new Date('2026-06-01T12:00:00Z');
const config = defaultMemoryConfig();

async function slice(set: RecallSet, handle: string, model: LocalModelName) {
  const prefix = `${set.language}.${handle}.`;
  const sub: RecallSet = { ...set, memories: set.memories.filter((m) => m.id.startsWith(prefix)), cases: set.cases.filter((c) => c.id.startsWith(prefix)) };
  const embedder = new LocalEmbedder(model);
  const t = defaultThresholds(embedder.id);
  const policy = { strong: t.strong, weak: t.weak, maxStrong: config.maxStrong, maxStrongChars: config.maxStrongChars, maxWeak: config.maxWeak, maxWeakChars: config.maxWeakChars };
  const vectors = await embedSet(sub, embedder);
  const outcomes = scoreCases(sub, vectors, now).map((s) => tierCase(sub, s, policy, now));
  const byQuery = new Map(outcomes.map((o) => [sub.cases.find((c) => c.id === o.caseId)?.query as string, o]));
  const similarity = (query: string, memoryId: string) => queryScorer(vectors.query.get(query) ?? [])(vectors.memory.get(sub.memories.find((m) => m.id === memoryId)?.text ?? '') ?? new Float32Array());
  return { sub, policy, outcomes, byQuery, similarity };
}

// What each question of the slice gets first (strong tier, else weak), as the models rank today. English
// memories are embedded in the first person; embedded as stored, the childhood, living, dinner and two
// allergy questions got a distractor first, and the bank PIN question got the dog memory as a hint.
const FIRST_EN: Record<string, string | null> = {
  'Which town did I spend my childhood in?': 'hometown',
  'Where is home for me these days?': 'residence',
  'What do I do for a living?': 'job',
  'Suggest a dinner; remember I skip meat and fish.': 'diet',
  'What foods give me a bad reaction?': 'allergy',
  "What's my pup's name?": 'dog',
  'Who am I married to?': 'wife',
  'Which degree is my sibling pursuing?': 'brother',
  'Which text editor do I program in?': 'editor',
  'Which programming language do I favour when starting something fresh?': 'typescript',
  'How should replies to me be formatted?': 'style',
  'When does my plane leave for Germany?': 'berlin',
  'What paperwork do I owe the government soon?': 'tax',
  'What race am I getting my legs ready for?': 'marathon',
  'How do I take my coffee?': 'coffee',
  'Is there a snack ingredient that could send me to hospital?': 'allergy',
  'Could you remind me which city I call home?': 'residence',
  'What is my blood type?': null, // nothing to recall
  'Explain how DNS resolution works.': null, // nothing to recall
  'Which company employs me?': 'job',
  'Is there any animal in my household?': 'd-pup', // miss: expected dog
  'Do I want long, detailed explanations?': 'style',
  'Am I still in Madrid?': 'hometown', // miss: expected residence
  'Is my ski trip to Andorra coming up?': 'marathon', // nothing to recall
  'What is my bank PIN hint?': null, // nothing to recall
};
const FIRST_ZH: Record<string, string | null> = {
  '我的家乡是哪里？': 'd-country', // miss: expected hometown
  '我目前定居在哪座城市？': 'residence',
  '我靠什么谋生？': 'style', // miss: expected job
  '推荐一道晚饭，记得我不碰荤腥。': 'diet',
  '哪种坚果会让我起疹子？': 'allergy',
  '我的宠物怎么称呼？': 'cat',
  '我爱人是做什么工作的？': 'd-colleague', // miss: expected wife
  '我孩子多大了？': 'daughter',
  '我平时用哪个编辑器敲程序？': 'editor',
  '我最中意哪门编程技术？': 'golang',
  '给我的内容应该怎么排版？': 'style',
  '我什么时候飞首都？': 'd-capital', // miss: expected beijing
  '本周我有哪份材料截止？': 'd-week', // miss: expected report
  '我晨练做什么？': 'running',
  '该给我泡点什么？': 'style', // miss: expected tea
  '哪家企业雇我？': 'd-colleague', // miss: expected job
  '有什么食物我绝对不能碰？': 'tea', // miss: expected allergy
  '我另一半在哪教书？': 'wife',
  '我的血型是什么？': null, // nothing to recall
  '解释一下 TCP 三次握手。': 'style', // nothing to recall
  '我孩子在哪念书？': 'd-kid', // miss: expected daughter
  '我仍在杭州生活吗？': 'residence',
  '我是不是喜欢详尽冗长的讲解？': 'style',
  '国庆去三亚的行程定了吗？': 'beijing', // nothing to recall
};

const first = (o: CaseOutcome | undefined) => [...(o?.strong ?? []), ...(o?.weak ?? [])][0] ?? null;
const short = (id: string | null) => (id === null ? null : id.split('.').slice(2).join('.'));

describe('the recall set with the default English model (one person)', () => {
  let s: Awaited<ReturnType<typeof slice>>;
  beforeAll(async () => {
    s = await slice(EN_RECALL_SET, 'ana', 'all-minilm-l6-v2-q');
  });

  it('puts exactly these memories first: the paraphrase where the model sees it, the word-sharing distractor where it does not', () => {
    const firsts = Object.fromEntries(s.outcomes.map((o) => [s.sub.cases.find((c) => c.id === o.caseId)?.query, short(first(o))]));
    expect(firsts).toEqual(FIRST_EN);
  });

  it('keeps out ended memories that say the very words of the question, though they score above strong', () => {
    for (const [query, ended] of [
      ['Do I want long, detailed explanations?', 'en.ana.style-old'],
      ['Am I still in Madrid?', 'en.ana.residence-old'],
      ['Is my ski trip to Andorra coming up?', 'en.ana.ski'],
      ['What is my bank PIN hint?', 'en.ana.pin'],
    ] as const) {
      expect({ query, aboveStrong: s.similarity(query, ended) >= s.policy.strong }).toEqual({ query, aboveStrong: true });
      const o = s.byQuery.get(query);
      expect([...(o?.strong ?? []), ...(o?.weak ?? [])]).not.toContain(ended);
    }
  });

  it('states nothing as remembered for questions about what the user never said, and nothing of another namespace ever', () => {
    for (const c of s.sub.cases.filter((x) => x.expected.length === 0)) expect({ q: c.query, strong: s.byQuery.get(c.query)?.strong }).toEqual({ q: c.query, strong: [] });
    const f = qualityFigures(s.sub, s.outcomes);
    expect(f.forbidden_returned).toBe(0);
    expect(f.unanswerable_clean).toBe(1);
  });
});

describe('the recall set with the Chinese model (one person)', () => {
  let s: Awaited<ReturnType<typeof slice>>;
  beforeAll(async () => {
    s = await slice(ZH_RECALL_SET, 'wanglei', 'bge-small-zh-v15-q');
  });

  it('puts exactly these memories first', () => {
    const firsts = Object.fromEntries(s.outcomes.map((o) => [s.sub.cases.find((c) => c.id === o.caseId)?.query, short(first(o))]));
    expect(firsts).toEqual(FIRST_ZH);
  });

  it('keeps out a superseded memory and a stale plan that match the question best', () => {
    for (const [query, ended] of [
      ['我仍在杭州生活吗？', 'zh.wanglei.residence-old'],
      ['国庆去三亚的行程定了吗？', 'zh.wanglei.sanya'],
    ] as const) {
      expect(s.similarity(query, ended)).toBeGreaterThanOrEqual(s.policy.strong);
      const o = s.byQuery.get(query);
      expect([...(o?.strong ?? []), ...(o?.weak ?? [])]).not.toContain(ended);
    }
    expect(qualityFigures(s.sub, s.outcomes).forbidden_returned).toBe(0);
  });
});
