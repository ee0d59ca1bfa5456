import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'model-errors',
  description: 'a 429 is retried after Retry-After; a context-length 400 fails the turn at once, and the session goes on',
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'rate_limit', retryAfterSeconds: 1 } },
        { respond: { kind: 'text', text: 'after the wait' } },
        { respond: { kind: 'context_length' } },
      ],
      { lane: ctx.sessionId },
    );
    const first = await say(ctx, 'hello');
    const second = await say(ctx, 'a very long message');
    ctx.check(first.outcome === 'completed' && second.outcome === 'failed', 'retried, then failed');
  },
});
