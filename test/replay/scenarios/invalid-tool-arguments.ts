import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

export default defineScenario({
  name: 'invalid-tool-arguments',
  description: 'tool calls with schema-invalid and unparsable arguments, and one off the allow-list, never run; the model is told why',
  env: { probeTools: true },
  session: { toolPolicy: { allow: ['local_sleepy', 'local_note'] } },
  async run(ctx) {
    ctx.env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_bad', name: 'local_sleepy', arguments: { ms: 'soon', label: 'x' } }] } },
        { respond: { kind: 'malformed_tool_json', name: 'local_sleepy', id: 'call_broken' } },
        { respond: { kind: 'tool_calls', calls: [{ id: 'call_w', name: 'local_wipe', arguments: { confirmText: 'yes' } }] } },
        { respond: { kind: 'text', text: 'Giving up.' } },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'sleep soon');
    ctx.check(ctx.probe.runs.length === 0, 'no tool ran');
  },
});
