import { lightStem, offlineTokens } from '../../activities/memory/embedder';

/**
 * Function characters ignored when Chinese texts are compared for shared
 * content: pronouns, particles, question words, copulas, common measure
 * words, and 用户 ("the user"), which every memory starts with as every
 * English one starts with "The user". Anything else shared counts.
 */
export const CHINESE_STOP_CHARACTERS = new Set(
  [...'我你他她它们的地得是了在吗呢吧啊么什哪谁怎样这那个有和与也都就还又要会能把被给对从到用户里儿一几为请些'],
);

/** English content words shared by two texts, as the offline embedder sees them (its stop words dropped, its stemmer applied). */
export function sharedEnglishWords(a: string, b: string): string[] {
  const left = new Set(offlineTokens(a).map(lightStem));
  return [...new Set(offlineTokens(b).map(lightStem))].filter((w) => left.has(w));
}

function chineseContent(text: string): Set<string> {
  const out = new Set<string>();
  // Han characters one by one; runs of Latin letters and digits as words.
  for (const m of text.toLowerCase().matchAll(/\p{Script=Han}|[\p{L}\p{N}]+/gu)) {
    const unit = m[0];
    if (!CHINESE_STOP_CHARACTERS.has(unit)) out.add(unit);
  }
  return out;
}

/** Chinese content characters (and Latin words) shared by two texts. */
export function sharedChineseCharacters(a: string, b: string): string[] {
  const left = chineseContent(a);
  return [...chineseContent(b)].filter((c) => left.has(c));
}
