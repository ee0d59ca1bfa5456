import { WithStartWorkflowOperation, WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AgentClient, NotAuthorizedError } from '../../client';
import { workflowIdFor } from '../../workflows/messages';
import type { Principal } from '../../workflows/principal';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';

/**
 * Who may act on a session: its owner, and for decisions, answers and
 * interrupts an approver (or admin) of the owner's tenant. Everyone else is
 * refused through every surface: the typed client, and a raw Temporal client
 * sending the message names with plain JSON.
 */

const log: ProbeLog = { runs: [] };
let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'tenancy', extraTools: probeTools(log) });
});
afterAll(async () => {
  await env?.close();
});

const OWNER: Principal = { tenant: 'acme', user: 'ana' };
const APPROVER: Principal = { tenant: 'acme', user: 'boss', roles: ['approver'] };

/** A small seeded generator, so a failure can be replayed from its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Principals that are neither the owner nor an approver of the owner's tenant. */
function outsider(next: () => number): Principal | undefined {
  const pick = <T,>(xs: T[]): T => xs[Math.floor(next() * xs.length)]!;
  const user = pick(['ana', 'bob', 'eve', 'ana ', 'ANA', `u${Math.floor(next() * 1e6)}`]);
  const tenant = pick(['acme', 'globex', 'initech', 'ACME', `t${Math.floor(next() * 1e6)}`]);
  const roles = pick<Principal['roles']>([undefined, [], ['user'], ['approver'], ['admin'], ['approver', 'admin']]);
  const p: Principal = { tenant, user, ...(roles ? { roles } : {}) };
  const isOwner = p.tenant === OWNER.tenant && p.user === OWNER.user;
  const elevated = p.tenant === OWNER.tenant && (roles ?? []).some((r) => r === 'approver' || r === 'admin');
  if (isOwner || elevated) return { ...p, tenant: `${p.tenant}-x` };
  return next() < 0.05 ? undefined : p;
}

const failureType = (err: unknown): string | undefined => {
  let e: unknown = err;
  while (e) {
    if (e instanceof ApplicationFailure && e.type) return e.type;
    if (e instanceof NotAuthorizedError) return 'NotAuthorized';
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
};

async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (i < items.length) await fn(items[i++]!);
  }));
}

describe('ownership and authorization', () => {
  it('refuses 1,000 randomized cross-owner calls through every surface; the owner and a tenant approver still act', async () => {
    const sessionId = uniqueId('s');
    const options = sessionOptions(sessionId, { busyPolicy: 'queue', limits: { confirmationTimeoutMs: 600_000 } });
    env.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: `call_wipe_${sessionId}`, name: 'local_wipe', arguments: { confirmText: 'all' } }] } },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Wiped.' } },
        { respond: { kind: 'text', text: 'Still here.' } },
      ],
      { lane: sessionId },
    );
    const { turnId } = await env.agent.send(options, { text: 'wipe my notes' });
    const pending = await eventually(async () => {
      const v = await env.agent.getSession(sessionId);
      return v.pendingConfirmations.length > 0 ? v : null;
    }, 'a pending confirmation');
    const toolCallId = pending.pendingConfirmations[0]!.toolCallId;
    const handle = env.client.workflow.getHandle(workflowIdFor(sessionId));

    const next = rng(12);
    let accepted = 0;
    let refused = 0;
    let unauthorizedSignals = 0;
    const refusedWith = (err: unknown): void => {
      const type = failureType(err);
      if (type === 'NotAuthorized') refused += 1;
      else throw new Error(`refused with ${type ?? 'no failure type'}, not NotAuthorized: ${String(err)} ${String((err as Error)?.cause)}`);
    };
    const expectRefused = async (call: () => Promise<unknown>): Promise<void> => {
      try {
        await call();
        accepted += 1;
      } catch (err) {
        refusedWith(err);
      }
    };

    // Outsiders' calls wait up to 30 s: during the flood a query can wait for the session's busy
    // workflow task for longer than the default 10 s on a loaded CI machine (this test is about who
    // is refused, not how fast).
    const outsiders = new AgentClient({ client: env.client, taskQueue: env.taskQueue, callTimeoutMs: 30_000 });
    type Case = () => Promise<void>;
    const kinds: Array<(p: Principal | undefined) => Case> = [
      // The typed client, acting for the outsider.
      (p) => () => expectRefused(() => outsiders.as(p ?? { tenant: 'x', user: 'y' }).sendTo(sessionId, { text: 'let me in' })),
      (p) => () => expectRefused(() => outsiders.as(p ?? { tenant: 'x', user: 'y' }).send(options, { text: 'let me in' })),
      (p) => () => expectRefused(() => outsiders.as(p ?? { tenant: 'x', user: 'y' }).approve(sessionId, toolCallId)),
      (p) => () => expectRefused(() => outsiders.as(p ?? { tenant: 'x', user: 'y' }).deny(sessionId, toolCallId)),
      (p) => () => expectRefused(() => outsiders.as(p ?? { tenant: 'x', user: 'y' }).waitForTurn(sessionId, turnId)),
      (p) => () => expectRefused(() => outsiders.as(p ?? { tenant: 'x', user: 'y' }).answerInput(sessionId, { inputId: `${toolCallId}:1`, action: 'cancel' })),
      (p) => () => expectRefused(() => outsiders.as(p ?? { tenant: 'x', user: 'y' }).getSession(sessionId)),
      (p) => () =>
        expectRefused(async () => {
          for await (const _ of outsiders.as(p ?? { tenant: 'x', user: 'y' }).events(sessionId)) return;
        }),
      (p) => () => expectRefused(() => outsiders.as(p ?? { tenant: 'x', user: 'y' }).listMemories({ namespace: OWNER })),
      // Raw updates with plain JSON.
      (p) => () => expectRefused(() => handle.executeUpdate('sendMessage', { args: [{ text: 'raw', principal: p }] })),
      (p) => () => expectRefused(() => handle.executeUpdate('decideToolCall', { args: [{ toolCallId, approved: true, principal: p }] })),
      (p) => () => expectRefused(() => handle.executeUpdate('waitForTurn', { args: [{ turnId, principal: p }] })),
      (p) => () => expectRefused(() => handle.executeUpdate('answerInput', { args: [{ inputId: `${toolCallId}:1`, action: 'decline', principal: p }] })),
      // Raw signals: not refusable, so ignored and counted; checked below.
      (p) => async () => {
        unauthorizedSignals += 1;
        await handle.signal('decideToolCall', { toolCallId, approved: true, principal: p });
      },
      (p) => async () => {
        unauthorizedSignals += 1;
        await handle.signal('interrupt', { reason: 'raw', principal: p });
      },
      (p) => async () => {
        unauthorizedSignals += 1;
        await handle.signal('endSession', { reason: 'raw', principal: p });
      },
      (p) => async () => {
        unauthorizedSignals += 1;
        await handle.signal('answerInput', { inputId: `${toolCallId}:1`, action: 'cancel', principal: p });
      },
    ];
    const cases: Case[] = [];
    for (let i = 0; i < 970; i++) cases.push(kinds[Math.floor(next() * kinds.length)]!(outsider(next)));
    // Raw memory workflows (a run each, so fewer): the workflow refuses before any activity.
    for (let i = 0; i < 25; i++) {
      const p = outsider(next);
      cases.push(() =>
        expectRefused(() =>
          env.client.workflow.execute('listUserMemories', { taskQueue: env.taskQueue, workflowId: uniqueId('memlist'), args: [{ namespace: OWNER, principal: p }] }),
        ),
      );
    }
    for (let i = 0; i < 5; i++) {
      const p = outsider(next);
      cases.push(() =>
        expectRefused(() =>
          env.client.workflow.execute('deleteUserMemory', { taskQueue: env.taskQueue, workflowId: uniqueId('memdel'), args: [{ namespace: OWNER, memoryId: 'mem_abcdef', principal: p }] }),
        ),
      );
    }
    expect(cases).toHaveLength(1_000);
    await pool(cases, 4, (c) => c());

    expect(accepted).toBe(0);
    expect(refused + unauthorizedSignals).toBe(1_000);
    const after = await env.agent.getSession(sessionId);
    expect(after.counters.signalsUnauthorized).toBe(unauthorizedSignals);
    expect(after.version).toBe(1);
    expect(after.pendingConfirmations.map((c) => c.toolCallId)).toEqual([toolCallId]);
    expect(after.counters.interrupts).toBe(0);
    expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toEqual([]);
    const history = await handle.fetchHistory();
    expect(history.events?.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);

    // A tenant approver decides; the decision is recorded with who made it.
    const approver = env.agent.as(APPROVER);
    expect((await approver.getSession(sessionId)).pendingConfirmations).toHaveLength(1);
    await approver.approve(sessionId, toolCallId);
    const events = await collectEvents(env.agent, sessionId, turnCompleted(turnId));
    expect(events.find((e) => e.event.type === 'confirmation_decided')?.event).toMatchObject({ decidedBy: 'user', principal: { tenant: 'acme', user: 'boss' } });
    await expect(approver.sendTo(sessionId, { text: 'approvers do not speak for the user' })).rejects.toThrow(NotAuthorizedError);
    // The owner still sends, and the turn records who sent it.
    const first = await env.agent.waitForTurn(sessionId, turnId);
    expect(first).toMatchObject({ outcome: 'completed', by: { tenant: 'acme', user: 'ana' } });
    const second = await env.agent.ask(options, { text: 'are you there?' });
    expect(second.turn).toMatchObject({ text: 'Still here.', by: { tenant: 'acme', user: 'ana' } });
    expect((await env.agent.getSession(sessionId)).window.at(-1)?.by).toEqual({ tenant: 'acme', user: 'ana' });
    // An admin of the tenant reads the user's memories; the user reads their own.
    await expect(env.agent.as({ tenant: 'acme', user: 'ops', roles: ['admin'] }).listMemories({ namespace: OWNER })).resolves.toMatchObject({ memories: [] });
    await expect(env.agent.listMemories({ namespace: OWNER })).resolves.toMatchObject({ memories: [] });
    env.model.assertDone(sessionId);
  }, 120_000);

  it('a session started by a message from someone other than its namespace refuses it and its run fails', async () => {
    const sessionId = uniqueId('s');
    const start = new WithStartWorkflowOperation('agentSession', {
      workflowId: workflowIdFor(sessionId),
      taskQueue: env.taskQueue,
      args: [{ options: sessionOptions(sessionId) }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    const err = await env.client.workflow
      .executeUpdateWithStart('sendMessage', { args: [{ text: 'hi', principal: { tenant: 'acme', user: 'eve' } }], startWorkflowOperation: start })
      .then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(failureType(err)).toBe('NotAuthorized');
    expect(String((err as Error).cause)).not.toContain('ana');
    const result = await env.client.workflow.getHandle(workflowIdFor(sessionId)).result().then(() => undefined, (e: unknown) => e);
    expect(result).toBeInstanceOf(WorkflowFailedError);
    expect(failureType(result)).toBe('NotAuthorized');
  });

  it('a client without a principal sends as the session options\' user and fails clearly for other calls', async () => {
    const sessionId = uniqueId('s');
    const bare = new AgentClient({ client: env.client, taskQueue: env.taskQueue });
    env.model.script([{ respond: { kind: 'text', text: 'hello' } }], { lane: sessionId });
    const { turn } = await bare.ask(sessionOptions(sessionId), { text: 'hi' });
    expect(turn).toMatchObject({ text: 'hello', by: { tenant: 'acme', user: 'ana' } });
    await expect(bare.getSession(sessionId)).rejects.toThrow(/getSession needs a principal/);
    await expect(bare.interrupt(sessionId)).rejects.toThrow(NotAuthorizedError);
    await env.agent.end(sessionId);
  });

  it('the memory, prompt and usage workflows started raw with bad input fail at once with a named type, never a workflow task, and echo no value', async () => {
    const secret = 'sk-SECRET-in-a-bad-field';
    const other: Principal = { tenant: 'evil', user: 'eve' };
    const cases: Array<[string, unknown, string]> = [
      // No principal first, whatever else is wrong: the archive reader answers the same way.
      ['listUserMemories', null, 'NotAuthorized'],
      ['listUserMemories', 'text', 'NotAuthorized'],
      ['listUserMemories', [OWNER], 'NotAuthorized'],
      ['listUserMemories', { namespace: null, principal: null }, 'NotAuthorized'],
      ['listUserMemories', { namespace: null, principal: OWNER }, 'SessionInputInvalid'],
      ['listUserMemories', { principal: OWNER }, 'SessionInputInvalid'],
      ['listUserMemories', { namespace: { tenant: 5, user: secret }, principal: OWNER }, 'SessionInputInvalid'],
      ['listUserMemories', { namespace: { tenant: 'acme', user: 'x'.repeat(10_000) }, principal: OWNER }, 'SessionInputInvalid'],
      ['listUserMemories', { namespace: OWNER, principal: other }, 'NotAuthorized'],
      ['deleteUserMemory', null, 'NotAuthorized'],
      ['deleteUserMemory', { namespace: 'acme/ana', memoryId: 'mem_1', principal: OWNER }, 'SessionInputInvalid'],
      ['deleteUserMemory', { namespace: OWNER, principal: OWNER }, 'SessionInputInvalid'],
      ['deleteUserMemory', { namespace: OWNER, memoryId: { $ne: secret }, principal: OWNER }, 'SessionInputInvalid'],
      ['deleteUserMemory', { namespace: OWNER, memoryId: 'mem_1', principal: other }, 'NotAuthorized'],
      ['readUserMemoryAudit', undefined, 'NotAuthorized'],
      ['readUserMemoryAudit', { namespace: [], memoryId: 'mem_1', principal: OWNER }, 'SessionInputInvalid'],
      ['readUserMemoryAudit', { namespace: OWNER, memoryId: 7, principal: OWNER }, 'SessionInputInvalid'],
      ['expandPrompt', null, 'SessionInputInvalid'],
      ['expandPrompt', { server: secret }, 'SessionInputInvalid'],
      ['expandPrompt', { server: 'glossary', name: 'p', arguments: { a: 1 } }, 'SessionInputInvalid'],
      ['expandPrompt', { server: 'glossary', name: 'p', arguments: [secret] }, 'SessionInputInvalid'],
      ['readUsage', null, 'NotAuthorized'],
      ['readUsage', { tenant: null, principal: OWNER }, 'SessionInputInvalid'],
      ['readUsage', { tenant: 'acme', days: secret, principal: OWNER }, 'SessionInputInvalid'],
    ];
    const outcomes = await Promise.all(
      cases.map(async ([type, input]) => {
        const workflowId = uniqueId(`raw-${type}`);
        // The execution timeout only bounds a regression: a workflow task failing over and over would otherwise hang here.
        const failure = await env.client.workflow
          .execute(type, { taskQueue: env.taskQueue, workflowId, args: [input], workflowExecutionTimeout: '30 seconds' })
          .then(
            () => undefined,
            (err: { cause?: { type?: string; message?: string; name?: string } }) => err.cause,
          );
        const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
        return {
          type,
          failure: { type: failure?.type ?? failure?.name, leaks: String(failure?.message).includes('SECRET') || String(failure?.message).includes('x'.repeat(200)) },
          taskFailures: events.filter((e) => e.workflowTaskFailedEventAttributes).length,
          activities: events.filter((e) => e.activityTaskScheduledEventAttributes).length,
        };
      }),
    );
    expect(outcomes).toEqual(
      cases.map(([type, , expected]) => ({ type, failure: { type: expected, leaks: false }, taskFailures: 0, activities: 0 })),
    );
  }, 60_000);
});

