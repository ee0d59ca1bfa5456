import type { ChildProcess } from 'node:child_process';
import { AgentClient } from '../../client/agent-client';
import { dataConverterFor } from '../../codec/data-converter';
import type { RuntimeConfig } from '../../workers/config';
import { startChild, stopChild } from './child-process';
import { runBatch } from './concurrent-sessions';

/**
 * What a cached session costs the worker: a worker of its own, with the
 * workflows in its main thread so a full GC and `heapUsed` see them, holds
 * `shape.sessions` idle sessions after their turns (the phases' shape);
 * ending them empties its cache. The heap after a GC, both ways.
 */
export async function measureCachedHeap(
  env: NodeJS.ProcessEnv,
  config: RuntimeConfig,
  shape: Parameters<typeof runBatch>[2],
  prefix: string,
  track: ChildProcess[],
): Promise<{ cachedMb: number; emptyMb: number }> {
  process.stderr.write(`[bench] cache: heap of ${shape.sessions} cached idle sessions, on a worker of its own\n`);
  const worker = await startChild('bench-worker.ts', {
    nodeArgs: ['--expose-gc'],
    env: { ...env, BENCH_WORKFLOWS_IN_MAIN_THREAD: '1' },
    ready: /worker ready/,
    label: 'cache worker',
    track,
  });
  const heapMb = async () => Number((await worker.ask('heap', /^heap /)).slice(5));
  const agent = await AgentClient.connect({
    address: config.temporal.address,
    namespace: config.temporal.namespace,
    taskQueue: String(env.TEMPORAL_TASK_QUEUE),
    dataConverter: dataConverterFor(config.encryption),
    principal: { tenant: 'bench', user: 'loop' },
  });
  try {
    let cachedMb = Number.NaN;
    await runBatch(agent, prefix, shape, { beforeEnd: async () => void (cachedMb = await heapMb()) });
    // Ended sessions leave the cache; what the heap lost is what they held. The SDK lets go of a
    // closed run's context a little later, so the least of a few readings a second apart counts.
    let emptyMb = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      emptyMb = Math.min(emptyMb, await heapMb());
    }
    return { cachedMb, emptyMb };
  } finally {
    await agent.client.connection.close().catch(() => undefined);
    await stopChild(worker.proc);
  }
}
