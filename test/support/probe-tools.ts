import { z } from 'zod';
import { defineTool, type NativeTool } from '../../activities/tools/native-tool';

/** What the probe tools saw, for assertions. Lives in the test process, where the worker runs. */
export interface ProbeLog {
  runs: Array<{ tool: string; args: unknown; start: number; end?: number; aborted?: boolean; key: string }>;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    }, { once: true });
  });
}

/** Native tools that record what happened to them: how tests observe overlap, aborts and runs. */
export function probeTools(log: ProbeLog): NativeTool[] {
  const record = (tool: string, args: unknown, key: string) => {
    const entry: ProbeLog['runs'][number] = { tool, args, start: Date.now(), key };
    log.runs.push(entry);
    return entry;
  };
  return [
    defineTool({
      name: 'sleepy',
      description: 'Waits for ms milliseconds and reports it. For tests.',
      parameters: z.object({ ms: z.number().int().min(0).max(60_000), label: z.string() }),
      risk: 'read',
      timeoutMs: 30_000,
      async execute(args, ctx) {
        const entry = record('sleepy', args, ctx.idempotencyKey);
        try {
          await sleep(args.ms, ctx.signal);
        } catch (err) {
          entry.aborted = true;
          throw err;
        } finally {
          entry.end = Date.now();
        }
        return { slept: args.ms, label: args.label };
      },
    }),
    defineTool({
      name: 'note',
      description: 'Stores a note for the user. For tests.',
      parameters: z.object({ text: z.string().min(1) }),
      risk: 'write',
      async execute(args, ctx) {
        record('note', args, ctx.idempotencyKey).end = Date.now();
        return { stored: args.text };
      },
    }),
    defineTool({
      name: 'wipe',
      description: 'Deletes all notes. For tests.',
      parameters: z.object({ confirmText: z.string() }),
      risk: 'destructive',
      async execute(args, ctx) {
        record('wipe', args, ctx.idempotencyKey).end = Date.now();
        return { wiped: true };
      },
    }),
    defineTool({
      name: 'slow',
      description: 'Takes longer than its timeout. For tests.',
      parameters: z.object({}),
      risk: 'read',
      timeoutMs: 1_000,
      maxAttempts: 1,
      async execute(_args, ctx) {
        const entry = record('slow', {}, ctx.idempotencyKey);
        await sleep(5_000, ctx.signal).catch(() => undefined);
        entry.end = Date.now();
        return 'late';
      },
    }),
    defineTool({
      name: 'forbidden',
      description: 'Always fails with a permission error. For tests.',
      parameters: z.object({}),
      risk: 'read',
      async execute() {
        const { ToolPermissionError } = await import('../../activities/tools/tool-errors');
        throw new ToolPermissionError('the service account may not read payroll');
      },
    }),
  ] as unknown as NativeTool[];
}
