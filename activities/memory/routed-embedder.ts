import type { Embedder } from './embedder';
import { LocalEmbedder } from './local-embedder';
import { ROUTED_MODELS, type RoutedModelName } from './local-models';

/** Which of a routed embedder's two models reads a text. */
export type ScriptPart = 'latin' | 'han';

// Enough of a text to tell its script; a 1 MB message is not scanned whole.
const SCAN_CHARS = 4096;
const HAN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu;
const LATIN_WORD = /\p{Script=Latin}+/gu;

/**
 * The script a text is mostly written in. One Han character carries about what
 * one English word does, so Han characters are weighed against Latin words:
 * "我用 VS Code 写代码" (5 against 2) is Chinese, "Tell me about Beijing 北京"
 * (2 against 4) is English. A text with neither goes to the Latin model.
 */
export function scriptPart(text: string): ScriptPart {
  const head = text.length > SCAN_CHARS ? text.slice(0, SCAN_CHARS) : text;
  let han = 0;
  for (const _ of head.matchAll(HAN)) han++;
  if (han === 0) return 'latin';
  let words = 0;
  for (const _ of head.matchAll(LATIN_WORD)) words++;
  return han >= words ? 'han' : 'latin';
}

/**
 * Two local models behind one embedder, each text embedded by the model of its
 * script (`scriptPart`). A vector holds both models' places side by side and
 * fills only its own model's: [latin model's dims | han model's dims]. So two
 * texts of one script compare exactly as that model compares them, and texts
 * of different scripts score 0 (neither model can tell how close they are).
 *
 * Each part keeps its own calibrated thresholds: `thresholdsId` names the part
 * a query goes to, and recall uses that part's values (embedder.ts).
 */
export class RoutedEmbedder implements Embedder {
  readonly id: string;
  readonly dims: number;
  readonly parts: Readonly<Record<ScriptPart, LocalEmbedder>>;
  private readonly offsets: Readonly<Record<ScriptPart, number>>;

  constructor(name: RoutedModelName, options: { root?: string } = {}) {
    const spec = ROUTED_MODELS[name];
    // Each part checks its files here, so a missing model stops the worker at start and names its fetch command.
    this.parts = { latin: new LocalEmbedder(spec.latin, options), han: new LocalEmbedder(spec.han, options) };
    this.id = `local:${name}`;
    this.offsets = { latin: 0, han: this.parts.latin.dims };
    this.dims = this.parts.latin.dims + this.parts.han.dims;
  }

  /**
   * A memory is worded as its script's model embeds memories (the English
   * model: in the first person). The model is chosen from the stored text:
   * rewording drops Latin words ("The user likes 火锅" becomes "I like 火锅"),
   * which could move a mixed text to the other model.
   */
  readonly memoryText = (stored: string): string => {
    const part = this.parts[scriptPart(stored)];
    return part.memoryText ? part.memoryText(stored) : stored;
  };

  /** Memories' stored texts: each routed by its stored text, then worded for that model. */
  embedStored(stored: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    return this.embedRouted(
      stored.map((text) => {
        const part = scriptPart(text);
        const wording = this.parts[part].memoryText;
        return { part, text: wording ? wording(text) : text };
      }),
      options,
    );
  }

  /** The embedder id whose calibrated recall thresholds apply to this query: its script's model. */
  thresholdsId(query: string): string {
    return this.parts[scriptPart(query)].id;
  }

  /** Texts as they are (queries), each routed by its script. */
  embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    return this.embedRouted(
      texts.map((text) => ({ part: scriptPart(text), text })),
      options,
    );
  }

  private async embedRouted(items: Array<{ part: ScriptPart; text: string }>, options: { signal?: AbortSignal }): Promise<number[][]> {
    const out: number[][] = new Array<number[]>(items.length);
    for (const part of ['latin', 'han'] as const) {
      const indices: number[] = [];
      items.forEach((item, i) => {
        if (item.part === part) indices.push(i);
      });
      if (indices.length === 0) continue;
      const vectors = await this.parts[part].embed(
        indices.map((i) => (items[i] as { text: string }).text),
        options,
      );
      indices.forEach((itemIndex, k) => {
        const full = new Array<number>(this.dims).fill(0);
        const v = vectors[k] ?? [];
        for (let d = 0; d < v.length; d++) full[this.offsets[part] + d] = v[d] as number;
        out[itemIndex] = full;
      });
    }
    return out;
  }
}
