/** One Server-Sent Event as read off the wire. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads Server-Sent Events from a response body as they arrive (comment
 * lines, such as keep-alives, are skipped). For tests, benchmarks and
 * clients of the API written in TypeScript.
 */
export async function* readSseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const e: SseEvent = { data: '' };
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') e.id = v;
          else if (field === 'event') e.event = v;
          else if (field === 'data') e.data += e.data ? `\n${v}` : v;
        }
        if (e.event || e.data) yield e;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
