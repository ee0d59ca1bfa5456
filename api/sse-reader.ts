import { createParser } from 'eventsource-parser';

/** One Server-Sent Event as read off the wire. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads Server-Sent Events from a response body as they arrive, parsed by
 * `eventsource-parser` (any of the spec's line ends; comment lines, such as
 * keep-alives, skipped). For tests, benchmarks and clients of the API
 * written in TypeScript.
 */
export async function* readSseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const parsed: SseEvent[] = [];
  const parser = createParser({
    onEvent: (m) => parsed.push({ data: m.data, ...(m.id !== undefined ? { id: m.id } : {}), ...(m.event !== undefined ? { event: m.event } : {}) }),
  });
  let endsInCr = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      // A body's last CR ends its line: the parser keeps it until it knows whether an LF follows.
      if (done) {
        if (endsInCr) parser.feed('\n');
      } else if (value.length > 0) {
        parser.feed(value);
        endsInCr = value.endsWith('\r');
      }
      while (parsed.length > 0) yield parsed.shift()!;
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
