import { useState } from 'preact/hooks';

/** Characters of a call's arguments shown before "Show the whole call". */
export const ARGUMENTS_SHOWN_CHARS = 4_000;

// Characters that change how text reads without showing themselves: bidirectional overrides and isolates,
// zero-width spaces and joiners, the byte-order mark. Shown by their code point, so what is approved is what is seen.
const HIDDEN = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;

export function withHiddenShown(text: string): string {
  return text.replace(HIDDEN, (ch) => `\u27e6U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}\u27e7`);
}

function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The call's arguments as shown: pretty JSON with invisible characters spelled out. */
const shown = (value: unknown): string => withHiddenShown(pretty(value));

/** True when the call's arguments, as shown, are longer than what is shown at first. */
export function argumentsCut(value: unknown): boolean {
  return shown(value).length > ARGUMENTS_SHOWN_CHARS;
}

/**
 * A held call's arguments as a person decides on them: the first 4,000
 * characters, and the whole call on request (the workflow allows 64,000), with
 * invisible characters made visible. `onSeenAll` is told once all of it was
 * on screen, so approving can wait for that.
 */
export function CallArguments({ value, onSeenAll }: { value: unknown; onSeenAll?: () => void }) {
  const [all, setAll] = useState(false);
  // Measured as shown, as argumentsCut measures it: the two must agree on whether part is hidden.
  const text = shown(value);
  const cut = text.length > ARGUMENTS_SHOWN_CHARS && !all;
  return (
    <>
      <pre class="wrap">{cut ? text.slice(0, ARGUMENTS_SHOWN_CHARS) : text}</pre>
      {cut ? (
        <button
          type="button"
          class="show-all"
          onClick={() => {
            setAll(true);
            onSeenAll?.();
          }}
        >
          Show the whole call ({text.length - ARGUMENTS_SHOWN_CHARS} more characters)
        </button>
      ) : null}
    </>
  );
}
