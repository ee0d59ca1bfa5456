import type { ActivityInboundCallsInterceptor, ActivityExecuteInput, Next } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { SessionArchiveRepository } from '../../activities/session-archive';
import { workflowIdFor } from '../../workflows/messages';

/*
 * The activities around a session's run that are not a turn's: the archive
 * written when it closes, and the read of which search attributes the
 * namespace has registered (for a session another client started without
 * them). Their failures must not fail the run: a failed run loses what it
 * held since its last archive. A fault injector on the worker fails them
 * for the sessions it is told about, as an unreachable MongoDB or a cluster
 * that refuses the operator call would.
 */

/** Sessions whose archive fails this many attempts before the next one is let through. */
const archiveFailures = new Map<string, number>();
/** Sessions whose archive read fails on every attempt, as while MongoDB is down. */
const archiveReadDown = new Set<string>();
/** Sessions whose search attribute read always fails. */
const attributesRefused = new Set<string>();
const attempts: Array<{ sessionId: string; type: string; attempt: number }> = [];

class Faults implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const { activityType, workflowExecution, attempt } = Context.current().info;
    const sessionId = workflowExecution?.workflowId.replace(/^session-/, '') ?? '';
    attempts.push({ sessionId, type: activityType, attempt });
    if (activityType === 'saveArchive' && attempt <= (archiveFailures.get(sessionId) ?? 0)) {
      throw ApplicationFailure.retryable('connection to 127.0.0.1:27017 closed', 'MongoNetworkError');
    }
    if (activityType === 'loadArchive' && archiveReadDown.has(sessionId)) {
      throw ApplicationFailure.retryable('connection to 127.0.0.1:27017 closed', 'MongoNetworkError');
    }
    if (activityType === 'describeSearchAttributes' && attributesRefused.has(sessionId)) {
      throw ApplicationFailure.nonRetryable('PERMISSION_DENIED: ListSearchAttributes is not allowed for this identity', 'PermissionDenied');
    }
    return next(input);
  }
}

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'lifecycle', workerOptions: { interceptors: { activity: [() => ({ inbound: new Faults() })] } } });
});
afterAll(async () => {
  await env?.close();
});

/** A session that has answered 'One.' to its first message; 'Two.' is scripted for its next. */
async function sessionAfterOneTurn(): Promise<{ sessionId: string; options: ReturnType<typeof sessionOptions> }> {
  const sessionId = uniqueId('s');
  env.model.script(
    [
      { respond: { kind: 'text', text: 'One.' } },
      { respond: { kind: 'text', text: 'Two.' } },
    ],
    { lane: sessionId },
  );
  const options = sessionOptions(sessionId);
  await env.agent.ask(options, { text: 'one' });
  return { sessionId, options };
}

it('an archive that fails its first attempts is tried until it lands: the run ends archived, and the next message restores it', async () => {
  const { sessionId, options } = await sessionAfterOneTurn();
  // As many failures as the three attempts the archive had before, after which the run failed.
  archiveFailures.set(sessionId, 3);
  const handle = env.agent.client.workflow.getHandle(workflowIdFor(sessionId));
  const { runId } = await handle.describe();
  await env.agent.end(sessionId, 'test closes it');
  const result = (await env.agent.client.workflow.getHandle(workflowIdFor(sessionId), runId).result()) as { status: string; version: number };
  expect(result).toMatchObject({ status: 'archived', version: 1 });
  expect(attempts.filter((a) => a.sessionId === sessionId && a.type === 'saveArchive').map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
  const stored = await new SessionArchiveRepository(env.db).load(sessionId);
  expect(stored).toMatchObject({ sessionId, version: 1, status: 'archived' });

  const next = await env.agent.ask(options, { text: 'two' });
  expect(next).toMatchObject({ turnId: 'turn-2', version: 2, turn: { outcome: 'completed', text: 'Two.' } });
}, 30_000);

it('an archive read that fails its attempts refuses the message with SessionClosedError and takes nothing; the next message after the outage restores the session', async () => {
  const { sessionId, options } = await sessionAfterOneTurn();
  const { runId } = await env.agent.client.workflow.getHandle(workflowIdFor(sessionId)).describe();
  await env.agent.end(sessionId, 'test closes it');
  await env.agent.client.workflow.getHandle(workflowIdFor(sessionId), runId).result();
  // The read is a local activity with three attempts: waiting longer inside one workflow task would keep the
  // task alive for the whole outage, three history events every 8 s, and hold up the worker's shutdown.
  archiveReadDown.add(sessionId);
  await expect(env.agent.ask(options, { text: 'lost in the outage' })).rejects.toMatchObject({ name: 'SessionClosedError' });
  // The first run's read (no archive yet), then the restoring run's three.
  expect(attempts.filter((a) => a.sessionId === sessionId && a.type === 'loadArchive').map((a) => a.attempt)).toEqual([1, 1, 2, 3]);
  archiveReadDown.delete(sessionId);
  // Nothing of the refused message was taken: the next one is the second turn.
  const next = await env.agent.ask(options, { text: 'two' });
  expect(next).toMatchObject({ turnId: 'turn-2', version: 2, turn: { outcome: 'completed', text: 'Two.' } });
  expect((await env.agent.getSession(sessionId)).window.map((t) => t.messages.find((m) => m.role === 'user')?.content)).toEqual(['one', 'two']);
}, 60_000);

it('a session another client started without search attributes runs when the namespace refuses to say which are registered', async () => {
  const sessionId = uniqueId('s');
  attributesRefused.add(sessionId);
  env.model.script([{ respond: { kind: 'text', text: 'hello' } }], { lane: sessionId });
  // As another SDK or the CLI would: a plain start, no search attributes.
  await env.client.workflow.start('agentSession', { workflowId: workflowIdFor(sessionId), taskQueue: env.taskQueue, args: [{ options: sessionOptions(sessionId) }] });
  const { turnId } = await env.agent.sendTo(sessionId, { text: 'hi' });
  expect(await env.agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'hello' });
  expect(attempts.some((a) => a.sessionId === sessionId && a.type === 'describeSearchAttributes')).toBe(true);
  const description = await env.client.workflow.getHandle(workflowIdFor(sessionId)).describe();
  expect(description.status.name).toBe('RUNNING');
  // It set none of its own: it could not know which the namespace has.
  expect(description.searchAttributes.SessionUser).toBeUndefined();
});

it('a session whose archive expired starts empty but keeps its numbering and owner, and archives again', async () => {
  const { sessionId, options } = await sessionAfterOneTurn();
  const handle = env.agent.client.workflow.getHandle(workflowIdFor(sessionId));
  const first = await handle.describe();
  await env.agent.end(sessionId, 'test closes it');
  await env.agent.client.workflow.getHandle(workflowIdFor(sessionId), first.runId).result();
  const repo = new SessionArchiveRepository(env.db);
  // Past its retention: the sweep keeps the header as a tombstone and deletes the content.
  await env.db.collection('sessions').updateOne({ _id: sessionId } as never, { $set: { expiresAt: '2000-01-01T00:00:00.000Z' } });
  await expect(repo.expire(new Date())).resolves.toMatchObject({ expired: 1 });
  expect(await repo.load(sessionId)).toMatchObject({ status: 'expired', version: 1, turnSeq: 1, window: [] });

  const next = await env.agent.ask(options, { text: 'two' });
  // Turn ids (and the idempotency keys of tool calls made under them) are not handed out again.
  expect(next).toMatchObject({ turnId: 'turn-2', version: 2, turn: { outcome: 'completed', text: 'Two.' } });
  const view = await env.agent.getSession(sessionId);
  expect(view.window.map((t) => t.turnId)).toEqual(['turn-2']);
  const second = await handle.describe();
  await env.agent.end(sessionId, 'test closes it again');
  const result = (await env.agent.client.workflow.getHandle(workflowIdFor(sessionId), second.runId).result()) as { status: string; version: number };
  // Before, the save looked for version 0 against the tombstone's 1, was refused three times, and the turn was lost.
  expect(result).toMatchObject({ status: 'archived', version: 2 });
  expect(await repo.load(sessionId)).toMatchObject({ status: 'archived', version: 2, turnSeq: 2 });
}, 45_000);

it('a message retried after its session closed is the turn it was, not a second one', async () => {
  const sessionId = uniqueId('s');
  env.model.script([{ respond: { kind: 'text', text: 'Booked.' } }], { lane: sessionId });
  const options = sessionOptions(sessionId);
  const handle = env.agent.client.workflow.getHandle(workflowIdFor(sessionId));
  const first = await env.agent.send(options, { text: 'book it', clientMessageId: 'book-1' });
  await env.agent.waitForTurn(sessionId, first.turnId);
  const { runId } = await handle.describe();
  // The answer to the send was lost, and the session closed before the client tried again.
  await env.agent.end(sessionId, 'idle');
  await env.agent.client.workflow.getHandle(workflowIdFor(sessionId), runId).result();
  // Retried as another SDK would: the same clientMessageId under an update id of its own (the typed client's
  // fixed update id lets the server answer from the closed run; nothing else does).
  const retry = () =>
    env.client.workflow.executeUpdateWithStart('sendMessage', {
      args: [{ text: 'book it', clientMessageId: 'book-1', principal: { tenant: 'acme', user: 'ana' } }],
      updateId: `other-sdk-${uniqueId('u')}`,
      startWorkflowOperation: new WithStartWorkflowOperation('agentSession', { workflowId: workflowIdFor(sessionId), taskQueue: env.taskQueue, args: [{ options }], workflowIdConflictPolicy: 'USE_EXISTING' }),
    });
  const again = await retry();
  // Before, the restored run had forgotten the id: the message became turn-2, and its tools ran again.
  expect(again).toEqual({ turnId: first.turnId, version: first.version });
  expect(env.model.requestsFor(sessionId)).toHaveLength(1);
  expect((await env.agent.getSession(sessionId)).counters.turns).toBe(1);
  // The run that answered it from the archive closes too: the id goes into its archive, and a third try is still that turn.
  const second = await handle.describe();
  await env.agent.end(sessionId, 'idle again');
  await env.agent.client.workflow.getHandle(workflowIdFor(sessionId), second.runId).result();
  const third = await retry();
  expect(third).toEqual({ turnId: first.turnId, version: first.version });
  expect(env.model.requestsFor(sessionId)).toHaveLength(1);
}, 45_000);
