import type { Payload } from '@temporalio/common';
import { ENCRYPTED_ENCODING, payloadCodecFor, type AesGcmPayloadCodec, type EncryptionSettings } from '../../codec';

const BASE64_RUN = /[A-Za-z0-9+/]{12,}={0,2}/g;

function decodeIfText(candidate: string): string | null {
  if (candidate.length % 4 !== 0) return null;
  const text = Buffer.from(candidate, 'base64').toString('utf8');
  // Mostly printable: a payload (JSON), not random bytes.
  const printable = text.replace(/[^\x20-\x7e\n\r\t]/g, '').length;
  return printable / Math.max(1, text.length) > 0.9 ? text : null;
}

function expand(text: string, depth: number, out: string[]): void {
  out.push(text);
  if (depth === 0) return;
  for (const match of text.match(BASE64_RUN) ?? []) {
    const decoded = decodeIfText(match);
    if (decoded) expand(decoded, depth - 1, out);
  }
}

/**
 * Everything readable in a workflow history, payloads decoded: payload data
 * is base64 in the JSON form, and stream events are payloads inside payloads,
 * so a secret could hide a few encodings deep. Search this, not the raw JSON.
 */
export function historyText(history: unknown): string {
  const out: string[] = [];
  expand(JSON.stringify(history), 4, out);
  return out.join('\n');
}

type PayloadLike = { metadata?: Record<string, Uint8Array | null> | null; data?: Uint8Array | null };

function isEncryptedPayload(value: unknown): value is PayloadLike {
  if (typeof value !== 'object' || value === null) return false;
  const encoding = (value as PayloadLike).metadata?.encoding;
  return encoding instanceof Uint8Array && Buffer.from(encoding).toString('utf8') === ENCRYPTED_ENCODING;
}

/** A copy of `value` with every encrypted payload decrypted by `codec` (throws if one cannot be: wrong key). */
async function decryptAll(value: unknown, codec: AesGcmPayloadCodec): Promise<unknown> {
  if (isEncryptedPayload(value)) {
    const [plain] = await codec.decode([value as Payload]);
    return plain;
  }
  if (Array.isArray(value)) return Promise.all(value.map((v) => decryptAll(v, codec)));
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array || ArrayBuffer.isView(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = await decryptAll(v, codec);
  return out;
}

/**
 * The readable text of a history as an operator with the keys sees it (the
 * Web UI through the codec server): payloads decrypted when encryption is on,
 * then searched like `historyText`. Tests that look for what a tool returned
 * read this; tests that look for what must not leak read `historyText` of the
 * raw history too.
 */
export async function decryptedHistoryText(history: unknown, encryption: EncryptionSettings): Promise<string> {
  const codec = payloadCodecFor(encryption);
  return historyText(codec ? await decryptAll(history, codec) : history);
}
