/**
 * Limits on JSON text from outside the workflow (the model's tool-call
 * arguments), checked by scanning the text before it is parsed: a value
 * nested 20,000 deep parses fine but overflows the stack of every later
 * `JSON.stringify`, including Temporal's payload conversion.
 */
export const JSON_LIMITS = {
  /** Characters of one call's arguments. */
  maxChars: 64_000,
  /** Nesting depth of objects and arrays. */
  maxDepth: 32,
  /** Object keys and array items, counted over the whole value. */
  maxEntries: 2_000,
} as const;

export interface JsonBoundsViolation {
  limit: 'size' | 'depth' | 'entries';
  message: string;
}

/** Returns what the text breaks, or null when it is within `limits`. Never parses, never recurses. */
export function checkJsonBounds(text: string, limits: { maxChars: number; maxDepth: number; maxEntries: number } = JSON_LIMITS): JsonBoundsViolation | null {
  if (text.length > limits.maxChars) {
    return { limit: 'size', message: `the arguments are ${text.length} characters long; the limit is ${limits.maxChars}` };
  }
  let depth = 0;
  let entries = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      entries++;
      if (depth > limits.maxDepth) return { limit: 'depth', message: `the arguments are nested more than ${limits.maxDepth} levels deep` };
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (c === 0x2c) {
      entries++;
    }
    if (entries > limits.maxEntries) return { limit: 'entries', message: `the arguments hold more than ${limits.maxEntries} keys and items` };
  }
  return null;
}

/** A short, single-line text form of a value for events and records; never throws, never recurses deeply. */
export function previewValue(value: unknown, max = 500): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = '[unprintable value]';
    }
  }
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
