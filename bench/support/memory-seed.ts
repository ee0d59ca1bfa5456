import { OfflineEmbedder } from '../../activities/memory/embedder';
import type { FactInput, IntentInput, PreferenceInput } from '../../activities/memory/memory-docs';

export const DAY = 86_400_000;

const TOPICS = ['project', 'team', 'city', 'dog', 'car', 'editor', 'language', 'manager', 'client', 'gym', 'book', 'band', 'course', 'bank', 'doctor', 'school'];
const VALUES = ['Lisbon', 'Apollo', 'Biscuit', 'Neovim', 'TypeScript', 'Rui Costa', 'Acme Corp', 'Zoe', 'Porto', 'Sofia', 'jazz', 'Berlin', 'Python', 'Kotlin', 'tennis', 'Faro'];
const PREFS = ['concise answers', 'answers in Portuguese', 'metric units', 'morning meetings', 'bullet lists', 'code examples in TypeScript', 'no emojis', 'formal tone'];
const PLANS = ['travelling to Berlin', 'moving flat', 'a marathon', 'an AWS exam', 'a product launch', 'a job interview'];

export const BENCH_QUERIES = [
  'What is my project called?',
  'Remind me of my manager',
  'Which city do I live in?',
  'Book a table near my gym',
  'Give me a concise answer about TypeScript',
  'Plan my trip to Berlin',
  'Recommend weekend activities for a friend',
  'What editor do I use for Kotlin?',
  'Draft an email to my client at Acme Corp',
  'How should I prepare for my AWS exam?',
  'Explain HTTP caching',
  'Suggest a book about jazz',
];

export type SeedInput = { kind: 'fact'; input: FactInput } | { kind: 'preference'; input: PreferenceInput } | { kind: 'intent'; input: IntentInput };

/** A deterministic spread of facts, preferences and intents (a tenth of them expired intents); ids never collide within a namespace. */
export function seedInputs(count: number, sessionId: string, now: Date, embedder: OfflineEmbedder): SeedInput[] {
  const out: SeedInput[] = [];
  for (let i = 0; i < count; i++) {
    const source = { sessionId, turnId: `turn-${i}`, messageIndex: 0, role: 'user' as const, origin: 'user' as const };
    const statedAt = new Date(now.getTime() - (i % 300) * DAY);
    const common = { source, statedAt, embedderId: embedder.id };
    const topic = TOPICS[i % TOPICS.length] as string;
    const value = VALUES[(i * 7) % VALUES.length] as string;
    const slot = i % 10;
    if (slot < 6) {
      const predicate = `${topic} ${i}`;
      const text = `The user's ${topic} number ${i} is ${value}.`;
      out.push({ kind: 'fact', input: { ...common, subject: 'user', predicate, key: `user|${predicate}`, value, text, embedding: embedder.embedOne(text), expiresAt: new Date(now.getTime() + 365 * DAY) } });
    } else if (slot < 9) {
      const statement = `${PREFS[i % PREFS.length]} for ${topic} ${i}`;
      const text = `The user prefers ${statement}.`;
      out.push({ kind: 'preference', input: { ...common, statement, polarity: 'prefers', text, embedding: embedder.embedOne(text), expiresAt: new Date(now.getTime() + 730 * DAY) } });
    } else {
      const statement = `preparing ${PLANS[i % PLANS.length]} with ${topic} ${i}`;
      const text = `The user is ${statement}.`;
      out.push({ kind: 'intent', input: { ...common, statement, text, embedding: embedder.embedOne(text), expiresAt: new Date(now.getTime() + (i % 2 === 0 ? 14 : -1) * DAY) } });
    }
  }
  return out;
}
