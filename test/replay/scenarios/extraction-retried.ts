import { ApplicationFailure } from '@temporalio/common';
import type { ExtractMemoriesInput } from '../../../activities/memory/memory-activity-types';
import { eventually } from '../../support/test-env';
import { defineScenario } from '../scenario';
import { EXTRACTION_MARKER } from '../memory-scenario';
import { activityFault, say } from '../scenario-helpers';

/** The extraction passes the worker saw: each attempt's turns, and whether the injector failed it. */
const passes: Array<{ attempt: number; turns: string[]; failed: boolean }> = [];

export default defineScenario({
  name: 'extraction-retried',
  description: "a memory extraction pass fails after its retries: its turn goes into the next pass, with the turn after it, and that pass runs",
  session: { memory: { enabled: true, extractEveryTurns: 1 } },
  env: {
    activityInterceptors: [
      activityFault(({ activityType, attempt }, args) => {
        if (activityType !== 'extractMemories') return undefined;
        const turns = (args[0] as ExtractMemoriesInput).turns.map((t) => t.turnId);
        // Every attempt of the first pass fails, as an unreachable model would.
        const failed = turns.length === 1 && turns[0] === 'turn-1';
        passes.push({ attempt, turns, failed });
        return failed ? ApplicationFailure.retryable('the model is unreachable', 'ModelUnavailable') : undefined;
      }),
    ],
  },
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'text', text: 'One.' } },
        { respond: { kind: 'text', text: 'Two.' } },
        { match: { systemIncludes: EXTRACTION_MARKER }, respond: { kind: 'json', value: { candidates: [] } } },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'one');
    await eventually(async () => (passes.some((p) => p.failed && p.attempt === 3) ? true : null), 'the first pass to fail for good');
    await say(ctx, 'two');
    await eventually(async () => (passes.some((p) => !p.failed) ? true : null), 'the second pass');
    const second = passes.find((p) => !p.failed);
    ctx.check(second?.turns.join(',') === 'turn-1,turn-2', `the second pass took turn-1 again with turn-2 (got ${second?.turns.join(',')})`);
  },
});
