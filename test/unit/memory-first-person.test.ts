import OpenAI from 'openai';
import { createEmbedder, OfflineEmbedder, OpenAIEmbedder, type Embedder } from '../../activities/memory/embedder';
import { firstPersonMemoryText, firstPersonVerb } from '../../activities/memory/first-person';
import { LocalEmbedder } from '../../activities/memory/local-embedder';
import { EN_RECALL_SET } from '../../evaluation/recall-set';

describe('a memory worded in the first person for embedding', () => {
  it.each([
    ["The user's dog is called Biscuit.", 'My dog is called Biscuit.'],
    ['The user is allergic to peanuts.', 'I am allergic to peanuts.'],
    ['The user has a hamster named Pip.', 'I have a hamster named Pip.'],
    ['The user lives in Lisbon now.', 'I live in Lisbon now.'],
    ['The user grew up in Porto.', 'I grew up in Porto.'],
    ['The user was born in Tunis.', 'I was born in Tunis.'],
    ['The user does not eat raw fish.', 'I do not eat raw fish.'],
    ["The user doesn't drink coffee.", "I don't drink coffee."],
    ["The user isn't a morning person.", 'I am not a morning person.'],
    ['The user studies Japanese.', 'I study Japanese.'],
    ['The user watches Formula 1 on Sundays.', 'I watch Formula 1 on Sundays.'],
    ['The user goes bouldering.', 'I go bouldering.'],
    ['The user also keeps goldfish.', 'I also keep goldfish.'],
    ['The user no longer eats meat.', 'I no longer eat meat.'],
    ['The user usually drinks tea.', 'I usually drink tea.'],
    ['The user will do fieldwork in Kenya.', 'I will do fieldwork in Kenya.'],
    ["The user's neighbour's kitties keep digging up the garden.", "My neighbour's kitties keep digging up the garden."],
    ["The user's friend has two daughters in the same school as the user's sons.", 'My friend has two daughters in the same school as my sons.'],
    ['Marco lives near the user.', 'Marco lives near me.'],
    ['Ana emails the user every Monday.', 'Ana emails me every Monday.'],
    ['Marco and the user are old friends.', 'Marco and I are old friends.'],
    ['Since moving, the user cycles to work.', 'Since moving, I cycle to work.'],
    ['User prefers concise answers.', 'I prefer concise answers.'],
    ["user's timezone: UTC+8", 'My timezone: UTC+8'],
    ['The user’s dog is called Biscuit.', 'My dog is called Biscuit.'],
    ['The user is vegan. The user’s partner is not.', 'I am vegan. My partner is not.'],
  ])('%s -> %s', (stored, embedded) => {
    expect(firstPersonMemoryText(stored)).toBe(embedded);
  });

  it('leaves the user as part of a noun, someone else\'s "user\'s", and texts about others unchanged', () => {
    for (const text of [
      'The user interface of the app is dark.',
      "The manual is a user's guide for the drone.",
      'The client has a severe nut allergy.',
      'The users of the forum are friendly.',
      '用户住在上海。',
      '',
    ]) expect(firstPersonMemoryText(text)).toBe(text);
  });

  it('changes only third-person verb forms after the subject', () => {
    expect(firstPersonVerb('carries')).toBe('carry');
    expect(firstPersonVerb('plays')).toBe('play');
    expect(firstPersonVerb('misses')).toBe('miss');
    expect(firstPersonVerb('uses')).toBe('use');
    expect(firstPersonVerb('always')).toBeUndefined();
    expect(firstPersonVerb('grew')).toBeUndefined();
    expect(firstPersonVerb('focus')).toBeUndefined();
  });

  it('is deterministic and leaves no "user" in any English memory of the recall set that is about the user', () => {
    for (const m of EN_RECALL_SET.memories) {
      const embedded = firstPersonMemoryText(m.text);
      expect(firstPersonMemoryText(m.text)).toBe(embedded);
      expect(embedded).not.toMatch(/\buser\b/i);
      if (/\bthe user\b/i.test(m.text)) expect(embedded).not.toBe(m.text);
    }
  });
});

describe('which embedders word memories in the first person', () => {
  const openai = new OpenAI({ baseURL: 'http://127.0.0.1:9999/v1', apiKey: 'unused' });

  it('the English local models do, and say so in their ids; the Chinese model, word hashing and endpoints embed memories as stored', () => {
    for (const name of ['all-minilm-l6-v2', 'all-minilm-l6-v2-q'] as const) {
      const embedder = new LocalEmbedder(name);
      expect(embedder.id).toBe(`local:${name}:first-person`);
      expect(embedder.memoryText?.('The user is vegan.')).toBe('I am vegan.');
    }
    const chinese = new LocalEmbedder('bge-small-zh-v15-q');
    expect(chinese.id).toBe('local:bge-small-zh-v15-q');
    expect(chinese.memoryText).toBeUndefined();
    const hashing: Embedder = new OfflineEmbedder();
    expect(hashing.memoryText).toBeUndefined();
    const endpoint = createEmbedder({ openai, embeddingModel: 'text-embedding-3-small' });
    expect(endpoint).toBeInstanceOf(OpenAIEmbedder);
    expect(endpoint.memoryText).toBeUndefined();
  });
});
