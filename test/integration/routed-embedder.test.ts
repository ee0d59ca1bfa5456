import type { Db } from 'mongodb';
import OpenAI from 'openai';
import { createEmbedder, defaultThresholds, embedMemories, thresholdsFor } from '../../activities/memory/embedder';
import { LocalEmbedder } from '../../activities/memory/local-embedder';
import { createMemoryActivities } from '../../activities/memory/memory-activities';
import { defaultMemoryConfig } from '../../activities/memory/memory-config';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import { cosine as cosineOf } from '../../activities/memory/recall';
import { RoutedEmbedder, scriptPart } from '../../activities/memory/routed-embedder';
import { EN_RECALL_SET, ZH_RECALL_SET, type RecallSet } from '../../evaluation/recall-set';
import { namespaceLabel } from '../../evaluation/recall-set/recall-set-types';
import { embedSet, qualityFigures, scoreCases, tierCase } from '../../evaluation/recall-set/recall-set-quality';
import { openTestDb, userSource } from '../support/memory-fixtures';

/**
 * The default embedder, local:en-zh-q: English through all-MiniLM-L6-v2 (int8),
 * Chinese through BGE small zh (int8), with the real models (fetched by Jest's
 * global setup).
 */
const openai = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'unused', maxRetries: 0 });
const routed = createEmbedder({ openai }) as RoutedEmbedder;
const english = new LocalEmbedder('all-minilm-l6-v2-q');
const chinese = new LocalEmbedder('bge-small-zh-v15-q');
const config = defaultMemoryConfig();
const cosine = (a: number[], b: number[]) => cosineOf(Float32Array.from(a), Float32Array.from(b));

describe('scriptPart', () => {
  it.each([
    ['What is my hometown?', 'latin'],
    ['我的家乡是哪里？', 'han'],
    ['我用 VS Code 写代码', 'han'], // 5 Han characters, 2 Latin words
    ['Tell me about Beijing 北京', 'latin'], // 2 against 4
    ['北京 is nice', 'han'], // 2 against 2: a tie goes to Han
    ['東京に住んでいます', 'han'], // kana count with Han
    ['', 'latin'],
    ['12345 !!!', 'latin'],
    ['\u0000\ud800 lone surrogate', 'latin'],
  ] as const)('%j goes to the %s model', (text, part) => {
    expect(scriptPart(text)).toBe(part);
  });

  it('reads only the head of a huge text', () => {
    expect(scriptPart(`${'中'.repeat(5000)}${' word'.repeat(100_000)}`)).toBe('han');
  });
});

describe('the routed embedder', () => {
  it('is the default, with both models side by side in one vector', () => {
    expect(routed).toBeInstanceOf(RoutedEmbedder);
    expect(routed.id).toBe('local:en-zh-q');
    expect(routed.dims).toBe(english.dims + chinese.dims);
  });

  it("fills only its script's model's place, with exactly that model's vector, so each language ranks as its model does", async () => {
    const texts = ['What is my hometown?', '我的家乡是哪里？', 'I grew up in Porto.', '用户在成都长大。'];
    const vectors = await routed.embed(texts);
    const [en1 = [], zh1 = [], en2 = [], zh2 = []] = vectors;
    const [e1 = [], e2 = []] = await english.embed([texts[0] as string, texts[2] as string]);
    const [c1 = [], c2 = []] = await chinese.embed([texts[1] as string, texts[3] as string]);
    expect(vectors.every((v) => v.length === routed.dims)).toBe(true);
    expect(en1.slice(0, english.dims)).toEqual(e1);
    expect(en1.slice(english.dims).every((x) => x === 0)).toBe(true);
    expect(zh1.slice(0, english.dims).every((x) => x === 0)).toBe(true);
    expect(zh1.slice(english.dims)).toEqual(c1);
    expect(cosine(en1, en2)).toBeCloseTo(cosine(e1, e2), 6);
    expect(cosine(zh1, zh2)).toBeCloseTo(cosine(c1, c2), 6);
    // Across scripts neither model can judge, and the score says nothing: 0.
    expect(cosine(en1, zh1)).toBe(0);
    expect(cosine(en2, zh2)).toBe(0);
  });

  it('words English memories in the first person, as the English model does, and Chinese ones as stored', async () => {
    expect(routed.memoryText("The user's dog is called Biscuit.")).toBe('My dog is called Biscuit.');
    expect(routed.memoryText('用户养了一只橘猫，叫馒头。')).toBe('用户养了一只橘猫，叫馒头。');
    const [stored = []] = await embedMemories(routed, ["The user's dog is called Biscuit."]);
    const [direct = []] = await embedMemories(english, ["The user's dog is called Biscuit."]);
    expect(stored.slice(0, english.dims)).toEqual(direct);
  });

  it('keeps a mixed memory with the model its stored text goes to, though the first-person wording drops Latin words', async () => {
    // Stored: 6 Latin words against 4 Han characters, English. Worded: "My favourite dish is 麻婆豆腐." has 4 against 4.
    const memory = "The user's favourite dish is 麻婆豆腐.";
    expect(scriptPart(memory)).toBe('latin');
    expect(scriptPart(routed.memoryText(memory))).toBe('han');
    const [stored = []] = await embedMemories(routed, [memory]);
    const [direct = []] = await embedMemories(english, [memory]);
    expect(stored.slice(0, english.dims)).toEqual(direct);
    expect(stored.slice(english.dims).every((x) => x === 0)).toBe(true);
    const [question = []] = await routed.embed(['What is my favourite dish?']);
    expect(cosine(question, stored)).toBeGreaterThan(0.3);
  });

  it("gives each query its language's calibrated thresholds, and configured ones to both", () => {
    expect(routed.thresholdsId('What is my hometown?')).toBe(english.id);
    expect(routed.thresholdsId('我的家乡是哪里？')).toBe(chinese.id);
    const of = thresholdsFor(routed, {});
    expect(of('What is my hometown?')).toEqual(defaultThresholds(english.id));
    expect(of('我的家乡是哪里？')).toEqual(defaultThresholds(chinese.id));
    expect(defaultThresholds(english.id)).not.toEqual(defaultThresholds(chinese.id));
    const configured = thresholdsFor(routed, { strongThreshold: 0.6, weakThreshold: 0.3 });
    expect(configured('What is my hometown?')).toMatchObject({ strong: 0.6, weak: 0.3 });
    expect(configured('我的家乡是哪里？')).toMatchObject({ strong: 0.6, weak: 0.3 });
  });
});

// One person of each language's set in ONE namespace: each language's questions must get exactly what
// that language's model alone gives, so a Chinese memory never crowds an English question out, nor the reverse.
const MIXED = { tenant: 'acme', user: 'bilingual' };
function mixed(): RecallSet {
  const take = (set: RecallSet, handle: string) => {
    const prefix = `${set.language}.${handle}.`;
    const home = set.cases.find((c) => c.id.startsWith(prefix))?.namespace;
    const move = <T extends { namespace: { tenant: string; user: string } }>(x: T): T => (home && namespaceLabel(x.namespace) === namespaceLabel(home) ? { ...x, namespace: MIXED } : x);
    return { memories: set.memories.filter((m) => m.id.startsWith(prefix)).map(move), cases: set.cases.filter((c) => c.id.startsWith(prefix)).map(move) };
  };
  const en = take(EN_RECALL_SET, 'ana');
  const zh = take(ZH_RECALL_SET, 'wanglei');
  return { language: 'en', memories: [...en.memories, ...zh.memories], cases: [...en.cases, ...zh.cases] };
}

describe('English and Chinese memories of one person, one namespace', () => {
  const now = new Date('2026-06-01T12:00:00Z');
  const base = { maxStrong: config.maxStrong, maxStrongChars: config.maxStrongChars, maxWeak: config.maxWeak, maxWeakChars: config.maxWeakChars };

  async function firsts(set: RecallSet, embedder: RoutedEmbedder | LocalEmbedder) {
    const of = thresholdsFor(embedder, {});
    const scored = scoreCases(set, await embedSet(set, embedder), now);
    const outcomes = scored.map((s) => {
      const query = set.cases.find((c) => c.id === s.caseId)?.query as string;
      return tierCase(set, s, { ...base, ...of(query) }, now);
    });
    return { outcomes, first: Object.fromEntries(outcomes.map((o) => [o.caseId, [...o.strong, ...o.weak][0] ?? null])) };
  }

  it('each question gets first what its language model alone gives it in a namespace of its own language', async () => {
    const set = mixed();
    const together = await firsts(set, routed);
    const enOnly: RecallSet = { ...set, memories: set.memories.filter((m) => m.id.startsWith('en.')), cases: set.cases.filter((c) => c.id.startsWith('en.')) };
    const zhOnly: RecallSet = { ...set, language: 'zh', memories: set.memories.filter((m) => m.id.startsWith('zh.')), cases: set.cases.filter((c) => c.id.startsWith('zh.')) };
    const alone = { ...(await firsts(enOnly, english)).first, ...(await firsts(zhOnly, chinese)).first };
    expect(together.first).toEqual(alone);
    // Nothing of the other language comes back at all, in either tier.
    for (const o of together.outcomes) for (const id of [...o.strong, ...o.weak]) expect(id.slice(0, 3)).toBe(o.caseId.slice(0, 3));
    expect(qualityFigures(set, together.outcomes).forbidden_returned).toBe(0);
  });

  describe('through recallMemories and the real MongoDB-compatible server', () => {
    let db: Db;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ db, close } = await openTestDb('routed_recall'));
      await new MemoryRepository(db).ensureIndexes();
    });
    afterAll(async () => close());

    it("recalls each language's memory for its own question, at that language's thresholds", async () => {
      const scope = new MemoryRepository(db).forNamespace(MIXED);
      const statedAt = new Date('2026-05-01T00:00:00Z');
      const write = async (predicate: string, value: string) => {
        const [embedding = []] = await embedMemories(routed, [value]);
        await scope.writeFact(
          { subject: 'user', predicate, key: `user|${predicate}`, value, text: value, embedding, embedderId: routed.id, source: userSource('s-1', 'turn-1'), statedAt, expiresAt: new Date('2027-05-01T00:00:00Z') },
          { actor: { by: 'extraction' }, now: statedAt },
        );
      };
      await write('dog', "The user's dog is called Biscuit.");
      await write('cat', '用户养了一只橘猫，叫馒头。');
      const memory = createMemoryActivities({ db, openai, embedder: routed, modelName: 'unused', config, clock: () => now, log: { debug: () => undefined, warn: () => undefined } });

      const en = await memory.recallMemories({ namespace: MIXED, query: "What's my dog's name?", sessionId: 's-1', turnId: 'turn-2' });
      expect([...en.strong, ...en.weak].map((m) => m.text)).toEqual(["The user's dog is called Biscuit."]);
      expect(en.thresholds).toEqual({ strong: defaultThresholds(english.id).strong, weak: defaultThresholds(english.id).weak });

      const zh = await memory.recallMemories({ namespace: MIXED, query: '我的宠物怎么称呼？', sessionId: 's-1', turnId: 'turn-3' });
      expect([...zh.strong, ...zh.weak].map((m) => m.text)).toEqual(['用户养了一只橘猫，叫馒头。']);
      expect(zh.thresholds).toEqual({ strong: defaultThresholds(chinese.id).strong, weak: defaultThresholds(chinese.id).weak });
      expect(zh.embedderId).toBe('local:en-zh-q');

      // A weak threshold at or below 0 still never brings the other script's memories (they score exactly 0).
      const anything = createMemoryActivities({ db, openai, embedder: routed, modelName: 'unused', config: { ...config, strongThreshold: 0.9, weakThreshold: -0.5 }, clock: () => now, log: { debug: () => undefined, warn: () => undefined } });
      const loose = await anything.recallMemories({ namespace: MIXED, query: '我的宠物怎么称呼？', sessionId: 's-1', turnId: 'turn-4' });
      expect([...loose.strong, ...loose.weak].map((m) => m.text)).toEqual(['用户养了一只橘猫，叫馒头。']);
      expect(loose.skipped.belowWeak).toBe(1);
    });
  });
});
