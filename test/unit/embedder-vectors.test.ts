import OpenAI from 'openai';
import { OpenAIEmbedder } from '../../activities/memory/embedder';
import { ScriptedModelServer } from '../../scripted-model';

/*
 * Vectors an embeddings endpoint returns are checked before anything is
 * stored: the scripted model over real HTTP through the openai SDK, its
 * vectors replaced by broken ones.
 */

let vector: (text: string) => number[] = () => [0.6, 0.8, 0];
let model: ScriptedModelServer;
beforeAll(async () => {
  model = await ScriptedModelServer.start({ embed: (text) => vector(text) });
});
afterAll(async () => {
  await model?.close();
});

const embedder = (dimensions?: number) => new OpenAIEmbedder(new OpenAI({ baseURL: model.baseUrl, apiKey: 'test-key' }), 'text-embedding-3-small', dimensions);

describe('vectors from an embeddings endpoint', () => {
  it('takes well-formed vectors', async () => {
    vector = () => [0.6, 0.8, 0];
    await expect(embedder().embed(['a', 'b'])).resolves.toEqual([
      [0.6, 0.8, 0],
      [0.6, 0.8, 0],
    ]);
  });

  it('refuses an empty vector, a vector of another length, and numbers past float32 or not numbers, naming the input and what is wrong', async () => {
    vector = () => [];
    await expect(embedder().embed(['a'])).rejects.toThrow(/for input 0, an empty vector/);
    vector = (text) => (text === 'b' ? [1, 0] : [0.6, 0.8, 0]);
    await expect(embedder().embed(['a', 'b'])).rejects.toThrow(/for input 1, a vector of 2 numbers where 3 were expected/);
    vector = () => [1e39, 0, 0];
    await expect(embedder().embed(['a'])).rejects.toThrow(/for input 0, a vector whose number 0 is 1e\+39/);
    vector = () => [0, null as unknown as number, 0];
    await expect(embedder().embed(['a'])).rejects.toThrow(/a vector whose number 1 is null/);
  });

  it('refuses a vector of another length than the configured dimensions, and than the ones it returned before', async () => {
    vector = () => [0.6, 0.8, 0];
    await expect(embedder(4).embed(['a'])).rejects.toThrow(/a vector of 3 numbers where 4 were expected/);
    const learning = embedder();
    await learning.embed(['a']);
    vector = () => [0.6, 0.8];
    await expect(learning.embed(['b'])).rejects.toThrow(/a vector of 2 numbers where 3 were expected/);
  });
});
