import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DELTA_BATCH_MAX_MS, DeltaRelay, deltaBatchDelayMs, pastWhatIsKept } from '../../activities/model-activities';
import { StreamedToolCalls } from '../../activities/streamed-tool-calls';

/** A client whose signals fail, as they do once the session's run has ended (a fault injector). */
function clientWhoseSignalsFail(sent: unknown[]): Client {
  const handle = {
    signal: async (_def: unknown, arg: unknown) => {
      sent.push(arg);
      throw new Error('workflow execution already completed');
    },
  };
  const client = { workflow: { getHandle: () => handle }, withAbortSignal: <R>(_signal: AbortSignal, fn: () => R): R => fn() };
  return client as unknown as Client;
}

/** A client whose signals take `ms` each, as from a worker far from its server. */
function slowClient(sent: Array<{ seq: number; deltas: Array<{ delta: string }> }>, ms: number): Client {
  const handle = {
    signal: async (_def: unknown, arg: { seq: number; deltas: Array<{ delta: string }> }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      sent.push(arg);
    },
  };
  return { workflow: { getHandle: () => handle }, withAbortSignal: <R>(_signal: AbortSignal, fn: () => R): R => fn() } as unknown as Client;
}

describe('streamed text on its way to the session', () => {
  it('signals slower than the model keep to the growing schedule: deltas that arrive during one wait for the next batch', async () => {
    const sent: Array<{ seq: number; deltas: Array<{ delta: string }> }> = [];
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'session-x', runId: 'r' } }, { client: slowClient(sent, 40) });
    const open: string[] = await env.run(async () => {
      const relay = new DeltaRelay(50, { turnId: 'turn-1', step: 1, attempt: 1 });
      // A delta every 5 ms for 3 s.
      for (let i = 0; i < 600; i++) {
        relay.add(`${i} `);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return relay.finish();
    });
    // One signal per 40 ms round trip came to 75 or more; the schedule allows about 35 in 3 s.
    expect(sent.length).toBeLessThan(50);
    const all = [...sent.flatMap((s) => s.deltas.map((d) => d.delta)), ...open];
    expect(all).toEqual(Array.from({ length: 600 }, (_, i) => `${i} `));
    expect(sent.map((s) => s.seq)).toEqual(sent.map((_, i) => i + 1));
  }, 20_000);


  it('a batch whose signal fails is lost, logged once, and nothing is left rejected for the process to die of', async () => {
    const sent: unknown[] = [];
    const warnings: string[] = [];
    const logger = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: (m: string) => void warnings.push(m), error: () => undefined };
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'session-x', runId: 'r' } }, { client: clientWhoseSignalsFail(sent), logger });
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const open = await env.run(async () => {
        const relay = new DeltaRelay(10, { turnId: 'turn-1', step: 1, attempt: 1 });
        relay.add('one ');
        await new Promise((resolve) => setTimeout(resolve, 50));
        relay.add('two ');
        await new Promise((resolve) => setTimeout(resolve, 50));
        relay.add('three');
        return relay.finish();
      });
      // Give Node the turn in which it reports a rejection nobody handled.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled.map(String)).toEqual([]);
      expect(sent).toHaveLength(2);
      expect(warnings.filter((w) => w.startsWith('Streamed text could not be signalled'))).toHaveLength(1);
      expect(open).toEqual(['three']);
    } finally {
      process.off('unhandledRejection', record);
    }
  });

  it('batches grow with the call: short answers keep 50 ms, and 21 minutes of streaming stay under the events a run may take', () => {
    expect(deltaBatchDelayMs(50, 0)).toBe(50);
    expect(deltaBatchDelayMs(50, 10)).toBe(50);
    expect(deltaBatchDelayMs(50, 100)).toBe(500);
    expect(deltaBatchDelayMs(50, 10_000)).toBe(DELTA_BATCH_MAX_MS);
    expect(deltaBatchDelayMs(5_000, 0)).toBe(5_000);
    // Batches sent over a stream of `seconds`, one after another as the schedule allows.
    const batches = (seconds: number): number => {
      let at = 0;
      let sent = 0;
      while (at < seconds * 1_000) {
        at += deltaBatchDelayMs(50, sent);
        sent += 1;
      }
      return sent;
    };
    expect(batches(1)).toBeGreaterThanOrEqual(15);
    expect(batches(60)).toBeLessThan(160);
    // 100,000 characters at 80 a second: each batch is a signal and a workflow task, four history events;
    // the server suggests continuing as new at 4,096 events and ends a run at 51,200.
    expect(4 * batches(1_260)).toBeLessThan(4_096);
  });

  it('a step is read up to its text limit, or to four times that much reasoning (a reasoning model in a loop)', () => {
    const none = new StreamedToolCalls();
    expect(pastWhatIsKept('x'.repeat(99_999), none)).toBe(false);
    expect(pastWhatIsKept('x'.repeat(100_000), none)).toBe(true);
    expect(pastWhatIsKept('', none, 400_000)).toBe(false);
    expect(pastWhatIsKept('', none, 400_001)).toBe(true);
  });
});
