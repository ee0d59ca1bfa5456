import { ApplicationFailure } from '@temporalio/common';
import { defineScenario } from '../scenario';
import { activityFault, say } from '../scenario-helpers';

let refused = 0;

export default defineScenario({
  name: 'tool-changed-reread',
  description: 'a call refused as ToolChanged (the worker now holds another tool under its name): the turn reads the catalog again before its next model call, and the call made again runs (patch catalog-read-after-tool-changed)',
  env: {
    probeTools: true,
    activityInterceptors: [
      // What a worker whose tool changed since the turn read its catalog answers, once.
      activityFault(({ activityType }, args) =>
        activityType === 'executeTool' && (args[0] as { toolName?: string }).toolName === 'local_note' && refused++ === 0
          ? ApplicationFailure.nonRetryable('The tool local_note changed after this call was planned (its description or parameters are not the ones the call was checked against), so it was not run.', 'ToolChanged')
          : undefined,
      ),
    ],
  },
  async run(ctx) {
    const note = (id: string) => ({ respond: { kind: 'tool_calls' as const, calls: [{ id, name: 'local_note', arguments: { text: 'lunch' } }] } });
    ctx.env.model.script(
      [note('call_note'), { match: { where: (req) => JSON.stringify(req.messages.at(-1)).includes('ToolChanged') }, ...note('call_note_again') }, { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Noted.' } }],
      { lane: ctx.sessionId },
    );
    const turn = await say(ctx, 'note lunch');
    ctx.check(turn.outcome === 'completed' && ctx.probe.runs.length === 1, 'the call made again ran once');
  },
});
