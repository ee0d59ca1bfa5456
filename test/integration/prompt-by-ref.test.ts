import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { CallModelInput } from '../../activities/activity-types';
import { PROMPT_PARTS_COLLECTION } from '../../activities/legacy-prompt-parts';
import { readRunPartsFromHistory } from '../../activities/prompt-parts-in-history';
import { workflowIdFor } from '../../workflows/messages';
import { PROMPT_PART_MISSING } from '../../workflows/prompt-parts';
import { spawnSync } from 'node:child_process';
import type { ModelPrompt } from '../../client/model-prompts';
import { scriptCall } from '../support/scripted-steps';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

let env: TestEnv;

beforeAll(async () => {
  env = await startTestEnv({ name: 'prompt-by-ref' });
});

afterAll(async () => {
  await env?.close();
});

interface ScheduledCall {
  input: CallModelInput;
  /** Bytes of the input payload as history holds it. */
  bytes: number;
}

/** Every `callModel` the session scheduled, decoded (payloads are encrypted in tests), with its failure type if it failed. */
async function modelCalls(sessionId: string): Promise<{ calls: ScheduledCall[]; failures: string[] }> {
  const history = await env.client.workflow.getHandle(workflowIdFor(sessionId)).fetchHistory();
  const converter = env.client.options.loadedDataConverter;
  const calls: ScheduledCall[] = [];
  const failures: string[] = [];
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'callModel') {
      const payloads = (scheduled.input?.payloads ?? []) as Payload[];
      const bytes = payloads.reduce((sum, p) => sum + (p.data?.length ?? 0), 0);
      calls.push({ input: await decodeFromPayloadsAtIndex<CallModelInput>(converter, 0, payloads), bytes });
    }
    const failed = event.activityTaskFailedEventAttributes?.failure;
    if (failed) failures.push(failed.applicationFailureInfo?.type ?? failed.message ?? '?');
  }
  return { calls, failures };
}

/** The catalogs the session's turn-start reads (`readTurnStart` local activities) returned, in order. */
async function catalogReads(sessionId: string): Promise<Array<{ unchanged?: boolean; tools: unknown[]; digest?: string }>> {
  const history = await env.client.workflow.getHandle(workflowIdFor(sessionId)).fetchHistory();
  const converter = env.client.options.loadedDataConverter;
  const reads = [];
  for (const event of history.events ?? []) {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') continue;
    const data = await decodeFromPayloadsAtIndex<{ activity_type: string }>(converter, 0, marker.details?.data?.payloads as Payload[]);
    if (data.activity_type !== 'readTurnStart') continue;
    const result = await decodeFromPayloadsAtIndex<{ catalog: { unchanged?: boolean; tools: unknown[]; digest?: string } }>(converter, 0, marker.details?.result?.payloads as Payload[]);
    reads.push(result.catalog);
  }
  return reads;
}

/** The prompt a by-reference input stands for, its parts looked up among every input of the run so far. */
function rebuilt(calls: ScheduledCall[], upTo: number): { messages: unknown[]; tools: unknown[] } {
  const parts: Record<string, unknown> = {};
  for (const call of calls.slice(0, upTo + 1)) Object.assign(parts, call.input.prompt?.parts ?? {});
  const prompt = calls[upTo]!.input.prompt!;
  return { messages: prompt.messages.map((id) => parts[id]), tools: prompt.tools.map((id) => parts[id]) };
}

async function toolTurn(sessionId: string, text: string, expression = '6*7'): Promise<void> {
  scriptCall(env.model, sessionId, 'local_calculate', { expression }, 'It is 42.');
  const { turnId } = await env.agent.send(sessionOptions(sessionId), { text });
  expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'It is 42.' });
}

describe('model calls carry their prompt by reference', () => {
  it('write each message and tool into history once, and the model still receives the whole prompt', async () => {
    const sessionId = uniqueId('byref');
    await toolTurn(sessionId, 'what is 6 times 7?');
    await toolTurn(sessionId, 'and again, please?');

    const { calls, failures } = await modelCalls(sessionId);
    expect(failures).toEqual([]);
    expect(calls).toHaveLength(4);
    const requests = env.model.requestsFor(sessionId).map((r) => r.body as { messages: unknown[]; tools?: Array<{ function: unknown }> });
    expect(requests).toHaveLength(4);
    const seen = new Set<string>();
    calls.forEach((call, i) => {
      const { input } = call;
      expect(input.messages).toEqual([]);
      expect(input.tools).toEqual([]);
      expect(input.prompt).toBeDefined();
      // The prompt's tag, which the activity checks whenever it rebuilt the prompt from held or read parts.
      expect(input.prompt!.digest).toMatch(/^[0-9a-f]{6}$/);
      // What the model got is exactly what the ids stand for.
      const whole = rebuilt(calls, i);
      expect(requests[i]!.messages).toEqual(whole.messages);
      expect(requests[i]!.tools?.map((t) => t.function)).toEqual(whole.tools);
      // Nothing goes inline twice: a part sent once is named by id after.
      for (const id of Object.keys(input.prompt!.parts)) {
        expect(seen.has(id)).toBe(false);
        seen.add(id);
      }
    });
    // Step 2 of turn 1 carries only what step 1 produced: the assistant's tool call and the tool's result.
    const inlineRoles = (i: number) => Object.values(calls[i]!.input.prompt!.parts).map((p) => (p as { role?: string }).role ?? 'tool definition');
    expect(inlineRoles(1)).toEqual(['assistant', 'tool']);
    // Turn 2 sends inline only turn 1's final answer (step 2's reply, new to the prompt) and the user's new message:
    // the system message is rebuilt each turn, but with equal text it is the same part; every tool schema is an id.
    expect(inlineRoles(2).sort()).toEqual(['assistant', 'user']);
    // Turn 2 read the catalog it already held: the worker said so instead of sending every schema again.
    const reads = await catalogReads(sessionId);
    expect(reads.map((r) => [r.unchanged ?? false, r.tools.length > 0])).toEqual([
      [false, true],
      [true, false],
    ]);
    expect(reads[1]!.digest).toBe(reads[0]!.digest);
    // The first call holds the whole prompt; the others a small share of it.
    const firstBytes = calls[0]!.bytes;
    for (const call of calls.slice(1)) expect(call.bytes).toBeLessThan(firstBytes / 2);
  });

  it('a new worker, holding none of the run\'s parts, reads them from the run\'s history: no failure, no resend, nothing stored', async () => {
    const sessionId = uniqueId('byref-history');
    await toolTurn(sessionId, 'what is 6 times 7?');
    // A new worker knows nothing in memory.
    await env.worker.shutdown();
    env.worker = await env.startWorker();

    await toolTurn(sessionId, 'and again, please?');
    const { calls, failures } = await modelCalls(sessionId);
    expect(failures).toEqual([]);
    expect(calls).toHaveLength(4);
    // Turn 2 named turn 1's parts by id, as on the worker that sent them.
    expect(Object.keys(calls[2]!.input.prompt!.parts).length).toBeLessThan(calls[2]!.input.prompt!.messages.length + calls[2]!.input.prompt!.tools.length);
    const requests = env.model.requestsFor(sessionId).map((r) => r.body as { messages: unknown[]; tools?: Array<{ function: unknown }> });
    expect(requests).toHaveLength(4);
    for (const i of [2, 3]) {
      expect(requests[i]!.messages).toEqual(rebuilt(calls, i).messages);
      expect(requests[i]!.tools?.map((t) => t.function)).toEqual(rebuilt(calls, i).tools);
    }
    // A step writes no prompt part to the database.
    await env.worker.writesSettled();
    expect(await env.db.collection(PROMPT_PARTS_COLLECTION).countDocuments({ workflowId: workflowIdFor(sessionId) })).toBe(0);
  });

  it('a history read goes back only as far as the parts it lacks, newest events first', async () => {
    const sessionId = uniqueId('byref-reverse');
    // Each turn a new calculation, so the last call carries parts of its own (the tool call and its result).
    await toolTurn(sessionId, 'what is 6 times 7?', '6*7');
    await toolTurn(sessionId, 'and 6 times 8?', '6*8');
    await toolTurn(sessionId, 'and 6 times 9?', '6*9');
    const workflowId = workflowIdFor(sessionId);
    const { runId } = await env.client.workflow.getHandle(workflowId).describe();
    const { calls } = await modelCalls(sessionId);
    const { events } = await env.client.workflow.getHandle(workflowId).fetchHistory();
    const total = (events ?? []).length;
    let pages = 0;
    let eventsRead = 0;
    const counting = {
      options: env.client.options,
      workflowService: {
        getWorkflowExecutionHistoryReverse: async (request: Parameters<Client['workflowService']['getWorkflowExecutionHistoryReverse']>[0]) => {
          pages += 1;
          const page = await env.client.workflowService.getWorkflowExecutionHistoryReverse(request);
          eventsRead += page.history?.events?.length ?? 0;
          return page;
        },
      },
    } as unknown as Client;
    const read = async (ids: string[]) => {
      pages = 0;
      eventsRead = 0;
      return readRunPartsFromHistory(counting, { workflowId, runId }, new Set(ids));
    };
    const inlineIn = (i: number) => Object.keys(calls[i]!.input.prompt!.parts);
    const bodyOf = (i: number, id: string) => JSON.stringify(calls[i]!.input.prompt!.parts[id]);
    // The last call's parts, which a worker lacks when the step before ran elsewhere: one small page.
    expect(inlineIn(calls.length - 1).length).toBeGreaterThan(0);
    const lastId = inlineIn(calls.length - 1)[0]!;
    const recent = await read([lastId]);
    expect(recent.get(lastId)).toBe(bodyOf(calls.length - 1, lastId));
    expect(pages).toBe(1);
    expect(eventsRead).toBeLessThan(total / 3);
    // The first call's parts (the system message, the tool schemas), which a worker that just started lacks:
    // back to the run's first call, with every part on the way.
    const all = await read(inlineIn(0));
    expect(pages).toBeGreaterThan(1);
    calls.forEach((call, i) => {
      for (const id of Object.keys(call.input.prompt!.parts)) expect(all.get(id)).toBe(bodyOf(i, id));
    });
    // An id no call carried: the whole history is read, and it is not there.
    const none = await read(['p999']);
    expect(none.has('p999')).toBe(false);
    expect(eventsRead).toBe(total);
  });

  it('a worker that cannot read the run\'s history fails the call as PromptPartMissing, and the session sends the whole prompt again', async () => {
    const sessionId = uniqueId('byref-lost');
    await toolTurn(sessionId, 'what is 6 times 7?');
    // A fault injector: the new worker's history reads fail.
    await env.worker.shutdown();
    env.worker = await env.startWorker(undefined, {
      promptPartsReader: async () => {
        throw new Error('injected: history unreadable');
      },
    });

    await toolTurn(sessionId, 'and again, please?');
    const { calls, failures } = await modelCalls(sessionId);
    expect(failures).toEqual([PROMPT_PART_MISSING]);
    // Turn 2: the call that failed, the same step again with every part inline, then step 2 by reference.
    expect(calls).toHaveLength(5);
    const resent = calls[3]!.input.prompt!;
    expect(Object.keys(resent.parts).sort()).toEqual([...new Set([...resent.messages, ...resent.tools])].sort());
    const requests = env.model.requestsFor(sessionId);
    expect(requests).toHaveLength(4);
    expect((requests[2]!.body as { messages: unknown[] }).messages).toEqual(rebuilt(calls, 3).messages);
    // The worker after it reads history again.
    await env.worker.shutdown();
    env.worker = await env.startWorker();
  });

  it('npm run prompt prints each prompt whole, rebuilt from the history alone', async () => {
    const sessionId = uniqueId('byref-show');
    await toolTurn(sessionId, 'what is 6 times 7?');
    const run = spawnSync(process.execPath, [require.resolve('tsx/cli'), 'scripts/show-prompt.ts', sessionId, '--json'], {
      cwd: process.cwd(),
      env: { ...process.env, TEMPORAL_TASK_QUEUE: env.taskQueue },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const prompts = JSON.parse(run.stdout) as ModelPrompt[];
    const requests = env.model.requestsFor(sessionId).map((r) => r.body as { messages: unknown[]; tools?: Array<{ function: unknown }> });
    expect(prompts.map((p) => [p.turnId, p.step, p.byReference])).toEqual([
      ['turn-1', 1, true],
      ['turn-1', 2, true],
    ]);
    expect(prompts.map((p) => p.messages)).toEqual(requests.map((r) => r.messages));
    expect(prompts.map((p) => p.tools)).toEqual(requests.map((r) => r.tools?.map((t) => t.function)));
  });

  it('the maintenance sweep deletes the parts an earlier version stored, once a day old', async () => {
    const parts = env.db.collection(PROMPT_PARTS_COLLECTION);
    const workflowId = workflowIdFor(uniqueId('byref-legacy'));
    const hour = 60 * 60 * 1000;
    // As a worker of an earlier version left them: one document per part, keyed by run.
    await parts.insertMany([
      { _id: 'run-old/p1' as never, workflowId, runId: 'run-old', body: '{"role":"user","content":"hi"}', createdAt: new Date(Date.now() - 30 * hour) },
      { _id: 'run-new/p1' as never, workflowId, runId: 'run-new', body: '{"role":"user","content":"hi"}', createdAt: new Date(Date.now() - hour) },
    ]);
    await env.client.workflow.execute('maintenanceSweep', { taskQueue: env.taskQueue, workflowId: uniqueId('sweep'), args: [] });
    expect((await parts.find({ workflowId }).toArray()).map((d) => d.runId)).toEqual(['run-new']);
  });
});
