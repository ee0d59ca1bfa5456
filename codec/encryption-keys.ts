/**
 * Payload encryption keys as configured: `PAYLOAD_ENCRYPTION_KEYS` is a comma
 * separated list of `id:base64key` (each key 32 bytes, AES-256), and
 * `PAYLOAD_ENCRYPTION_KEY_ID` names the one new payloads are encrypted with.
 * Every listed key can decrypt, so a rotated-out key stays listed until no
 * history still needs it.
 *
 * Messages here never contain key material: only ids and positions.
 */

export const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export interface EncryptionKeyring {
  /** The key id new payloads are encrypted with. */
  currentKeyId: string;
  /** Every known key by id; all of them can decrypt. */
  keys: ReadonlyMap<string, Buffer>;
}

/** Problems found in a key list, each naming the entry by position and id, never its material. */
export function keyListProblems(list: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const entries = list.split(',').map((e) => e.trim());
  entries.forEach((entry, i) => {
    const where = `entry ${i + 1}`;
    const colon = entry.indexOf(':');
    if (colon <= 0) {
      problems.push(`${where} is not id:base64key`);
      return;
    }
    const id = entry.slice(0, colon);
    const material = entry.slice(colon + 1);
    if (!KEY_ID.test(id)) problems.push(`${where} has an invalid key id (letters, digits, . _ - only, at most 64)`);
    else if (seen.has(id)) problems.push(`${where} repeats key id "${id}"`);
    seen.add(id);
    if (!BASE64.test(material)) problems.push(`${where} (key id "${id}") is not base64`);
    else if (Buffer.from(material, 'base64').length !== KEY_BYTES)
      problems.push(`${where} (key id "${id}") decodes to ${Buffer.from(material, 'base64').length} bytes, not ${KEY_BYTES}`);
  });
  return problems;
}

/** Parses a list already checked by keyListProblems. */
export function parseKeyList(list: string): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  for (const entry of list.split(',').map((e) => e.trim())) {
    const colon = entry.indexOf(':');
    keys.set(entry.slice(0, colon), Buffer.from(entry.slice(colon + 1), 'base64'));
  }
  return keys;
}

/** The base64 strings of a key list, so the redactor can keep them out of logs and errors. */
export function keyMaterialStrings(list: string): string[] {
  return list
    .split(',')
    .map((e) => e.trim())
    .map((e) => e.slice(e.indexOf(':') + 1))
    .filter((m) => m.length > 0);
}
