import { mintToken, TokenBook } from '../../api/auth';
import { createApi, listen } from '../../api/server';
import { readSseEvents, type SseEvent } from '../../api/sse-reader';
import { TruncatedOffsetError, type AgentClient, type SessionEvent } from '../../client';

/*
 * The API's shared reader of a session falls behind what the session keeps
 * (it was catching up when the run continued as new and dropped events).
 * The HTTP server, its streams and their readers are real; the session
 * behind them is a fault injector whose reader yields offsets 0 to 4, then
 * fails as the typed client does when the run keeps events from 8 on.
 */

const SESSION = 'behind-1';

function behindAgent(): AgentClient {
  const events = async function* (): AsyncGenerator<SessionEvent> {
    // Late enough that both readers below are connected when the shared reader fails.
    await new Promise((r) => setTimeout(r, 300));
    for (let offset = 0; offset < 5; offset++) {
      yield { offset, event: { type: 'text_delta', sessionId: SESSION, at: new Date(0).toISOString(), turnId: 'turn-1', step: 1, attempt: 1, delta: `${offset}` } };
    }
    throw new TruncatedOffsetError(SESSION, 5, 8);
  };
  const owner = { tenant: 'acme', user: 'ana' };
  // Its stream has got to offset 11: the reader below resumes at 10, within it.
  const agent = { as: () => agent, events, getSession: async () => ({ sessionId: SESSION, owner, namespace: owner, version: 1 }), nextEventOffset: async () => 11 };
  return agent as unknown as AgentClient;
}

it('a reader ahead of the shared reader when it falls behind is told to reconnect (503), one behind it that events are gone (410 with the earliest kept)', async () => {
  const { token, entry } = mintToken({ tenant: 'acme', user: 'ana' });
  const api = createApi({ agent: behindAgent(), tokens: new TokenBook([entry]) });
  const server = await listen(api.app, 0);
  const read = async (from: number): Promise<SseEvent[]> => {
    const res = await fetch(`${server.url}/v1/sessions/${SESSION}/events?from=${from}`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    const got: SseEvent[] = [];
    for await (const e of readSseEvents(res.body!)) {
      got.push(e);
      if (e.event === 'problem' || e.event === 'end') break;
    }
    return got;
  };
  try {
    // One resumes at 10 (it had everything to 9 from an earlier reader); one is at 3.
    const [ahead, behind] = await Promise.all([read(10), read(3)]);
    expect(ahead).toHaveLength(1);
    expect(ahead[0]!.event).toBe('problem');
    expect(JSON.parse(ahead[0]!.data)).toMatchObject({ status: 503, failureType: 'StreamRestarting', retryAfterSeconds: 1 });
    expect(JSON.parse(ahead[0]!.data).detail).toMatch(/nothing of yours was lost\. Reconnect from event 10/);
    expect(behind.filter((e) => e.id !== undefined).map((e) => Number(e.id))).toEqual([3, 4]);
    expect(JSON.parse(behind.at(-1)!.data)).toMatchObject({ status: 410, failureType: 'TruncatedOffset', earliestOffset: 8 });
  } finally {
    api.hub.close();
    await server.close();
  }
});
