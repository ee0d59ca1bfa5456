/**
 * Temporal's default limits on what one payload may weigh: the server warns
 * at 512 KB and refuses 2 MB (a refused command fails the workflow task, and
 * the same task fails again on every retry). The workflow checks what it
 * writes against the lower figure, leaving room for encoding and for a
 * codec's overhead.
 */
export const SAFE_PAYLOAD_BYTES = 512 * 1024;
export const SERVER_PAYLOAD_LIMIT_BYTES = 2 * 1024 * 1024;

/** The JSON size of a value, as the default payload converter would write it; Infinity when it cannot be encoded. */
export function payloadBytes(value: unknown): number {
  try {
    const json = JSON.stringify(value);
    if (json === undefined) return 0;
    // UTF-8 length without TextEncoder (not in every sandbox): multi-byte characters count extra.
    let bytes = json.length;
    for (let i = 0; i < json.length; i++) {
      const c = json.charCodeAt(i);
      if (c >= 0x80) bytes += c >= 0x800 && (c < 0xd800 || c > 0xdfff) ? 2 : 1;
    }
    return bytes;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
