import type { ServerResponse } from 'node:http';

/**
 * Server-sent events the way the OpenAI API frames them: `data: <json>\n\n`
 * per event and a literal `data: [DONE]` at the end. Every write waits for
 * the socket to take the bytes, so deltas leave as separate writes and a
 * client abort stops the stream between two events.
 */
export class SseStream {
  constructor(
    private readonly res: ServerResponse,
    /** Aborted when the connection closes, whoever closed it. */
    private readonly closed: AbortSignal,
  ) {}

  get live(): boolean {
    return !this.closed.aborted && !this.res.destroyed && !this.res.writableEnded;
  }

  open(): void {
    if (this.res.headersSent) return;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    // Without this a hanging stream would never hand the client its headers.
    this.res.flushHeaders();
  }

  send(data: unknown): Promise<void> {
    return this.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  async done(): Promise<void> {
    await this.write('data: [DONE]\n\n');
    if (this.live) this.res.end();
  }

  /** Sleeps, but wakes at once when the connection closes. */
  async pause(ms: number): Promise<void> {
    if (ms <= 0 || !this.live) return;
    await pauseUnlessClosed(ms, this.closed);
  }

  private write(text: string): Promise<void> {
    if (!this.live) return Promise.resolve();
    return new Promise((resolve) => {
      const settle = (): void => {
        this.closed.removeEventListener('abort', settle);
        resolve();
      };
      this.closed.addEventListener('abort', settle, { once: true });
      // The callback also runs (with an error) if the socket dies first; either way we move on.
      this.res.write(text, () => settle());
    });
  }
}

/** Splits by code point so a delta never ends inside a surrogate pair. */
export function splitIntoDeltas(text: string, size: number): string[] {
  const points = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(''));
  return pieces;
}

/** Waits `ms`, or less when `closed` fires first; says whether the whole wait passed with the connection still open. */
export function pauseUnlessClosed(ms: number, closed: AbortSignal): Promise<boolean> {
  if (closed.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const wake = (waited: boolean): void => {
      clearTimeout(timer);
      closed.removeEventListener('abort', cut);
      resolve(waited);
    };
    const cut = (): void => wake(false);
    const timer = setTimeout(() => wake(true), ms);
    closed.addEventListener('abort', cut, { once: true });
  });
}
