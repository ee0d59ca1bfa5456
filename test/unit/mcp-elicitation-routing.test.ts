import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { ElicitationBroker } from '../../activities/mcp/mcp-elicitation';
import type { McpLogger } from '../../activities/mcp/mcp-log';

const question: ElicitRequest = { method: 'elicitation/create', params: { message: 'Which account?', requestedSchema: { type: 'object', properties: { account: { type: 'string' } } } } };

function broker(windowMs = 60_000) {
  const warnings: string[] = [];
  const log: McpLogger = { debug: () => undefined, info: () => undefined, warn: (m) => warnings.push(m), error: () => undefined };
  return { warnings, broker: new ElicitationBroker('bank', log, windowMs) };
}

/** A call that answers its question with `who`, and records that it was asked. */
function callOf(who: string, asked: string[]) {
  return async (): Promise<ElicitResult> => {
    asked.push(who);
    return { action: 'accept', content: { account: who } };
  };
}

describe("routing a server's question to the call that asked it", () => {
  it('goes to the one call in flight', async () => {
    const { broker: b } = broker();
    const asked: string[] = [];
    const release = b.enter(callOf('ana', asked));
    expect(await b.route(question)).toEqual({ action: 'accept', content: { account: 'ana' } });
    release();
    expect(asked).toEqual(['ana']);
  });

  it('is cancelled while a call given up on (timed out, interrupted) may still run on the server: it never reaches another user', async () => {
    const { broker: b, warnings } = broker();
    const asked: string[] = [];
    // Ana's call times out; the server ignores the cancellation and goes on with it.
    b.enter(callOf('ana', asked), 'acme/ana')(true);
    const releaseBo = b.enter(callOf('bo', asked), 'acme/bo');
    // Ana's late question, while Bo's call is the only one in flight.
    expect(await b.route(question)).toEqual({ action: 'cancel' });
    releaseBo();
    expect(asked).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/within 60 s of another user's call given up on before the server answered it; cannot tell which one asked, answered "cancel"/)]);
  });

  it("goes to the same user's next call after their own call was given up on (an interrupt by their next message)", async () => {
    const { broker: b } = broker();
    const asked: string[] = [];
    b.enter(callOf('ana-1', asked), 'acme/ana')(true);
    const release = b.enter(callOf('ana-2', asked), 'acme/ana');
    expect(await b.route(question)).toEqual({ action: 'accept', content: { account: 'ana-2' } });
    release();
  });

  it('is routed again once that window has passed, and a call that ended normally opens none', async () => {
    const { broker: b } = broker(50);
    const asked: string[] = [];
    b.enter(callOf('ana', asked), 'acme/ana')(true);
    await new Promise((r) => setTimeout(r, 80));
    b.enter(callOf('bo', asked), 'acme/bo')(false);
    const releaseCy = b.enter(callOf('cy', asked), 'acme/cy');
    expect(await b.route(question)).toEqual({ action: 'accept', content: { account: 'cy' } });
    releaseCy();
  });
});
