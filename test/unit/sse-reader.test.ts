import { readSseEvents, type SseEvent } from '../../api/sse-reader';

/** A body that arrives in the given pieces, as a proxy may cut and re-frame it. */
function bodyOf(pieces: string[]): ReadableStream<Uint8Array> {
  const bytes = pieces.map((p) => new TextEncoder().encode(p));
  return new ReadableStream({
    pull(controller) {
      const next = bytes.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
}

async function readAll(pieces: string[]): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of readSseEvents(bodyOf(pieces))) out.push(e);
  return out;
}

describe('readSseEvents', () => {
  const expected: SseEvent[] = [
    { id: '0', event: 'text_delta', data: '{"a":1}' },
    { id: '1', event: 'end', data: '{}' },
  ];

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('reads events framed with %s line ends, cut anywhere, keep-alive comments skipped', async (_name, eol) => {
    const wire = `: keep-alive${eol}${eol}id: 0${eol}event: text_delta${eol}data: {"a":1}${eol}${eol}id: 1${eol}event: end${eol}data: {}${eol}${eol}`;
    // Every cut point, including inside a CRLF pair.
    for (let cut = 1; cut < wire.length; cut++) {
      expect(await readAll([wire.slice(0, cut), wire.slice(cut)])).toEqual(expected);
    }
  });

  it('joins multi-line data with LF, and leaves a message the body cuts short unread', async () => {
    expect(await readAll(['data: one\ndata: two\n\n', 'id: 9\ndata: cut'])).toEqual([{ data: 'one\ntwo' }]);
  });
});
