import { z } from 'zod';

// The real API rejects empty strings; so do we, to catch a runtime that embeds nothing.
const EmbeddingInputText = z.string().min(1, 'input cannot be an empty string');

export const EmbeddingRequest = z.looseObject({
  model: z.string().min(1),
  // Token-array input is valid upstream but nothing of ours sends it, so it is refused here.
  input: z.union([EmbeddingInputText, z.array(EmbeddingInputText).min(1)]),
  // The `openai` SDK asks for base64 unless the caller chose, and decodes it itself.
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().positive().optional(),
});
export type EmbeddingRequest = z.infer<typeof EmbeddingRequest>;

export type Embedder = (text: string, dims: number) => number[];

export const DEFAULT_EMBEDDING_DIMS = 256;

export function embeddingResponseBody(request: EmbeddingRequest, embed: Embedder): unknown {
  const inputs = typeof request.input === 'string' ? [request.input] : request.input;
  const dims = request.dimensions ?? DEFAULT_EMBEDDING_DIMS;
  const data = inputs.map((text, index) => {
    const vector = embed(text, dims);
    return {
      object: 'embedding',
      index,
      embedding: request.encoding_format === 'base64' ? toBase64Float32(vector) : vector,
    };
  });
  const tokens = inputs.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return {
    object: 'list',
    data,
    model: request.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

/** Little-endian float32 bytes, base64-encoded: what the API sends for `encoding_format: 'base64'`. */
function toBase64Float32(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}
