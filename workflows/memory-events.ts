/**
 * Spots user messages that should trigger a memory extraction right away
 * instead of at the next periodic pass: an explicit "remember that", a fact
 * the user states or corrects about themself, a preference, a standing rule,
 * or a goal that spans sessions. Pure and import-free, so the workflow can
 * call it on every message. It only decides *when* to extract; what is kept
 * is the extraction model's and the quality gate's call.
 */

export const MemoryEvent = {
  explicit_remember: 'explicit_remember',
  correction: 'correction',
  self_fact: 'self_fact',
  preference: 'preference',
  standing_rule: 'standing_rule',
  goal: 'goal',
} as const;
export type MemoryEvent = (typeof MemoryEvent)[keyof typeof MemoryEvent];

// Checked in order; the first match names the event.
const PATTERNS: Array<[MemoryEvent, RegExp]> = [
  ['explicit_remember', /\b(?:remember (?:that|this|my|i|me)|don'?t forget|do not forget|keep in mind|make a note|note that|for future reference|save (?:this|that) (?:to|in) (?:your )?memory)\b/i],
  [
    'correction',
    /\b(?:actually,? (?:my|i(?:'m| am)|i (?:live|work|prefer))|that'?s (?:not|no longer) (?:right|correct|true)|(?:no|not anymore),? (?:my|i)\b|i (?:meant|moved|changed (?:jobs?|teams?|my))|correction:|it'?s no longer|i no longer|(?:has|have) changed to)/i,
  ],
  ['self_fact', /\b(?:my name is|call me|i(?:'m| am) called|i live in|i(?:'m| am) (?:based|located) in|i work (?:at|for|as)|my (?:job|role|title|team|company|employer|time ?zone|email|birthday|wife|husband|partner|son|daughter|kids?|dog|cat) (?:is|are)|i(?:'m| am) (?:a|an) [a-z]+(?:\s[a-z]+)? (?:by profession|engineer|developer|designer|manager|teacher|doctor|nurse|student|vegetarian|vegan)|i(?:'m| am) (?:vegetarian|vegan|allergic to))\b/i],
  ['standing_rule', /\b(?:from now on|going forward|in (?:the )?future,? (?:please )?(?:always|never|don'?t|use|answer|reply|write)|(?:always|never) (?:answer|reply|respond|write|use|call me|address me|include|add))\b/i],
  ['preference', /\b(?:i (?:really )?(?:prefer|like|love|hate|dislike|can'?t stand|enjoy)|i'?d rather|i (?:don'?t|do not) (?:like|want|enjoy)|my (?:favou?rite|preferred)|please (?:keep|make) (?:it|your answers|answers|replies) (?:short|brief|concise|detailed))\b/i],
  ['goal', /\b(?:my goal is|i(?:'m| am) (?:planning|preparing|training|saving|trying|going) (?:to|for)|i plan to|i want to .{3,60} by (?:next|the end|end of|\w+day|january|february|march|april|may|june|july|august|september|october|november|december|\d)|i(?:'m| am) (?:travelling|traveling|moving|relocating)|i have (?:a|an) (?:exam|deadline|interview|trip) )/i],
];

/** The event a message signals, or null when it can wait for the periodic pass. */
export function detectMemoryEvent(userText: string): MemoryEvent | null {
  const text = userText.slice(0, 4_000);
  for (const [event, pattern] of PATTERNS) if (pattern.test(text)) return event;
  return null;
}

/** True when the workflow should run extraction on this turn right away. */
export function shouldExtractNow(userText: string): boolean {
  return detectMemoryEvent(userText) !== null;
}
