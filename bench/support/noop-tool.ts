import { z } from 'zod';
import { defineTool, type NativeTool } from '../../activities/tools/native-tool';

const NoopArgs = z.object({ i: z.number().int().min(0) });

/** Does nothing and says so: the cost of a tool call without the tool. */
export async function runNoop(args: z.infer<typeof NoopArgs>): Promise<{ ok: true; i: number }> {
  return { ok: true, i: args.i };
}

/** The same no-op as a native tool, for the worker (the model sees `local_bench_noop`). */
export const noopTool = defineTool({
  name: 'bench_noop',
  description: 'Does nothing and returns at once. For the loop benchmark.',
  parameters: NoopArgs,
  risk: 'read',
  // It returns at once, so it declares a short timeout like the built-in clock and calculator;
  // that makes it a local activity (see runsLocally in workflows/react-turn.ts).
  timeoutMs: 1_000,
  execute: (args) => runNoop(args),
}) as unknown as NativeTool;

/** Parses the arguments the model sent, as the runtime would before running the tool. */
export function parseNoopArgs(raw: string): z.infer<typeof NoopArgs> {
  return NoopArgs.parse(raw.trim() === '' ? {} : JSON.parse(raw));
}
