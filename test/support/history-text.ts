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
