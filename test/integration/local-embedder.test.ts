import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultThresholds, embedMemories } from '../../activities/memory/embedder';
import { LocalEmbedder, LocalModelMissingError } from '../../activities/memory/local-embedder';
import { LOCAL_MODELS, type LocalModelName } from '../../activities/memory/local-models';

/** The English model, one part of the default embedder (local:en-zh-q). */
const ENGLISH_MODEL = 'all-minilm-l6-v2-q' as const;

/**
 * The real models, fetched into .tools/models/ by Jest's global setup: ONNX
 * inference on CPU is deterministic, so scores are asserted, not mocked.
 */
const cosine = (a: number[], b: number[]): number => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);
const norm = (v: number[]): number => Math.sqrt(cosine(v, v));

async function rank(embedder: LocalEmbedder, query: string, memories: string[]): Promise<Array<{ memory: string; score: number }>> {
  const [q] = await embedder.embed([query]);
  const vectors = await embedMemories(embedder, memories);
  return memories.map((memory, i) => ({ memory, score: cosine(q as number[], vectors[i] as number[]) })).sort((a, b) => b.score - a.score);
}

describe('the default local embedder (English)', () => {
  const embedder = new LocalEmbedder(ENGLISH_MODEL);
  const thresholds = defaultThresholds(embedder.id);

  it('names its vector space after the model and the first-person wording, and returns unit vectors of the model\'s length', async () => {
    expect(embedder.id).toBe(`local:${ENGLISH_MODEL}:first-person`);
    const [v] = await embedder.embed(['The user lives in Lisbon.']);
    expect(v).toHaveLength(384);
    expect(norm(v as number[])).toBeCloseTo(1, 6);
  });

  it('finds a paraphrase that shares no word with the question, and ranks it above near-topic memories', async () => {
    const ranked = await rank(embedder, 'what is my hometown?', [
      'The user prefers dark roast coffee.',
      'I grew up in Porto',
      'The user is training for a marathon.',
      'The user works from home on Fridays.',
    ]);
    expect(ranked[0]?.memory).toBe('I grew up in Porto');
    // Recalled (as a hint at least), while no unrelated memory reaches the weak tier.
    expect(ranked[0]?.score).toBeGreaterThanOrEqual(thresholds.weak);
    for (const other of ranked.slice(1)) expect(other.score).toBeLessThan(thresholds.weak);
  });

  it('puts a clear answer in the strong tier and unrelated memories below the weak one', async () => {
    const [dog] = await rank(embedder, "What's my dog's name?", ["The user's dog is called Biscuit."]);
    const [allergy] = await rank(embedder, 'What food am I allergic to?', ['The user is allergic to peanuts.']);
    expect(dog?.score).toBeGreaterThanOrEqual(thresholds.strong);
    expect(allergy?.score).toBeGreaterThanOrEqual(thresholds.strong);
    for (const [query, memory] of [
      ['Where do I work?', 'The user is allergic to peanuts.'],
      ['What kind of music do I like?', "The user's dog is called Biscuit."],
      ['Which city do I live in?', 'The user prefers TypeScript for new projects.'],
    ] as const) {
      const [unrelated] = await rank(embedder, query, [memory]);
      expect(unrelated?.score).toBeLessThan(thresholds.weak);
    }
  });

  it('loads the model once per process, however many embedders are made', async () => {
    await embedder.embed(['warm']);
    const again = new LocalEmbedder(ENGLISH_MODEL);
    expect(await again.warmUp()).toBeLessThan(50);
    expect(await again.embed(['same text'])).toEqual(await embedder.embed(['same text']));
  });
});

describe('batches', () => {
  const texts = [
    'Hi',
    'The user is travelling to Berlin at the end of the month.',
    'What do I need for my trip? Remember that I always forget my charger and that I prefer trains to planes when the journey is under five hours.',
    '',
    'The user is vegetarian.',
  ];

  it.each(Object.keys(LOCAL_MODELS) as LocalModelName[])('%s gives each text the vector it gets alone', async (name) => {
    const embedder = new LocalEmbedder(name);
    const batched = await embedder.embed(texts);
    for (const [i, text] of texts.entries()) {
      const [alone] = await embedder.embed([text]);
      const diff = Math.max(...(alone as number[]).map((x, k) => Math.abs(x - ((batched[i] as number[])[k] as number))));
      expect(diff).toBeLessThan(1e-5);
    }
  });

  it('the fp32 model reproduces the similarities sentence-transformers publishes for all-MiniLM-L6-v2', async () => {
    const embedder = new LocalEmbedder('all-minilm-l6-v2');
    const [a, b, c] = (await embedder.embed(['The weather is lovely today.', "It's so sunny outside!", 'He drove to the stadium.'])) as [number[], number[], number[]];
    expect(cosine(a, b)).toBeCloseTo(0.666, 3);
    expect(cosine(a, c)).toBeCloseTo(0.1046, 3);
    expect(cosine(b, c)).toBeCloseTo(0.1411, 3);
  });
});

describe('the Chinese model', () => {
  const embedder = new LocalEmbedder('bge-small-zh-v15-q');
  const thresholds = defaultThresholds(embedder.id);

  it('ranks the memory that answers a Chinese question first, above the weak tier, and leaves the others below it', async () => {
    expect(embedder.dims).toBe(512);
    const ranked = await rank(embedder, '我对什么过敏？', ['用户喜欢喝绿茶。', '用户对花生过敏。', '用户住在上海。', '用户的狗叫豆豆。']);
    expect(ranked[0]?.memory).toBe('用户对花生过敏。');
    expect(ranked[0]?.score).toBeGreaterThanOrEqual(thresholds.strong);
    for (const other of ranked.slice(1)) expect(other.score).toBeLessThan(thresholds.weak);
  });
});

describe('inputs a model never sees in tests', () => {
  const embedder = new LocalEmbedder(ENGLISH_MODEL);

  it.each([
    ['a 1 MB text', 'lorem ipsum dolor sit amet '.repeat(40_000).slice(0, 1_000_000)],
    ['an empty string', ''],
    ['only white space', ' \n\t '],
    ['lone surrogates', '\ud800 start \udc00 end \ud83d'],
    ['one 100,000-character word', 'x'.repeat(100_000)],
    ['control characters', '\u0000\u0001\u0007\u001b[31m'],
  ])('%s gives a finite vector and no crash', async (_what, text) => {
    const started = performance.now();
    const [v] = await embedder.embed([text]);
    expect(v).toHaveLength(embedder.dims);
    expect((v as number[]).every(Number.isFinite)).toBe(true);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('cuts a text at the model\'s token limit, so words past it change nothing', async () => {
    const long = 'The user keeps a long diary about gardening and tomatoes. '.repeat(40);
    const [a, b] = await embedder.embed([long, `${long} The user also collects stamps from Japan.`]);
    expect(a).toEqual(b);
  });
});

describe('missing model files', () => {
  it('stop the embedder at creation with the path and the command that fetches them', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'no-models-'));
    try {
      const create = () => new LocalEmbedder('all-minilm-l6-v2-q', { root });
      expect(create).toThrow(LocalModelMissingError);
      expect(create).toThrow(/all-minilm-l6-v2-q.*model\.onnx is missing.*npm run models:fetch -- all-minilm-l6-v2-q/s);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
