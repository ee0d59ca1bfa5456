import type { ActivityInboundCallsInterceptor, ActivityExecuteInput, Next } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import { DAY, fact, userSource } from '../support/memory-fixtures';

/*
 * A turn starts with three reads: the day's budget and the tool catalog, in
 * one local activity (`readTurnStart`, patch `turn-reads-in-one`), and the
 * memories recalled for the message, in another. Both are scheduled
 * together (patch `turn-start-together`), so the turn waits for the slower,
 * not for the sum. A fault injector on the worker holds the budget and
 * catalog read for a while and notes when each read ran. (An interrupt
 * cannot reach a turn while these reads run: local activities hold the
 * workflow task, and signals are handled between tasks.)
 */

const HOLD_MS = 600;
const READS = ['readTurnStart', 'recallMemories', 'checkBudget', 'getToolCatalog'] as const;

interface Ran {
  type: string;
  workflowId: string;
  start: number;
  end: number;
}
const ran: Ran[] = [];

class ReadTimer implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const { activityType, workflowExecution, isLocal } = Context.current().info;
    if (!isLocal || !(READS as readonly string[]).includes(activityType)) return next(input);
    const start = Date.now();
    try {
      if (activityType === 'readTurnStart') await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      return await next(input);
    } finally {
      ran.push({ type: activityType, workflowId: workflowExecution?.workflowId ?? '', start, end: Date.now() });
    }
  }
}

/** A tenant whose day allows one token: its first turn's model call spends it. */
const BUDGETED = 'turnstart-budgeted';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({
    name: 'turnstart',
    configEnv: { EMBEDDING_MODEL: 'offline-hash' },
    budgets: { tenants: { [BUDGETED]: { tokensPerDay: 1 } }, users: {} },
    workerOptions: { interceptors: { activity: [() => ({ inbound: new ReadTimer() })] } },
  });
  await new MemoryRepository(env.db).ensureIndexes();
});
afterAll(async () => {
  await env?.close();
});

it('reads the budget and the tool catalog in one local activity, beside the recall: the recall starts while that read is held, and the model gets the recalled memory and the tools', async () => {
  const sessionId = uniqueId('s');
  const user = uniqueId('u');
  const now = new Date();
  await new MemoryRepository(env.db)
    .forNamespace({ tenant: 'acme', user })
    .writeFact(fact('home city', 'Lisbon', { source: userSource('earlier', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) }), { actor: { by: 'import' }, now });
  env.model.script(
    [
      // The recalled memory and the catalog's tools both reach the model's request.
      { match: { where: (req) => /home city is Lisbon/.test(String(req.messages[0]?.content ?? '')) && (req.tools?.length ?? 0) > 0 }, respond: { kind: 'text', text: 'Lisbon.' } },
      { respond: { kind: 'text', text: 'Again.' } },
    ],
    { lane: sessionId },
  );
  const options = sessionOptions(sessionId, { namespace: { tenant: 'acme', user }, memory: { enabled: true } });
  const asUser = env.agent.as(options.namespace);
  const first = await asUser.ask(options, { text: "What is the user's home city?" });
  expect(first.turn).toMatchObject({ outcome: 'completed', text: 'Lisbon.' });
  const second = await asUser.ask(options, { text: 'And again?' });
  expect(second.turn).toMatchObject({ outcome: 'completed', text: 'Again.' });

  const mine = ran.filter((r) => r.workflowId.endsWith(sessionId));
  // Each turn ran the combined read and the recall once, and neither read on its own.
  expect(mine.filter((r) => r.type === 'readTurnStart')).toHaveLength(2);
  expect(mine.filter((r) => r.type === 'recallMemories')).toHaveLength(2);
  expect(mine.filter((r) => r.type === 'checkBudget' || r.type === 'getToolCatalog')).toHaveLength(0);
  for (let turn = 0; turn < 2; turn++) {
    const nth = (type: string): Ran => mine.filter((r) => r.type === type)[turn] as Ran;
    const [reads, recall] = [nth('readTurnStart'), nth('recallMemories')];
    // One after the other, the recall would start only once the held read had ended.
    expect(recall.start).toBeLessThan(reads.end);
    expect(reads.end - reads.start).toBeGreaterThanOrEqual(HOLD_MS - 5);
  }
});

it("acts on the budget read in the combined read: once the first turn has spent the day's budget, the second stops before its model call", async () => {
  const sessionId = uniqueId('s');
  env.model.script([{ respond: { kind: 'text', text: 'Spent.' } }], { lane: sessionId });
  const options = sessionOptions(sessionId, { namespace: { tenant: BUDGETED, user: uniqueId('u') } });
  const asUser = env.agent.as(options.namespace);
  const first = await asUser.ask(options, { text: 'hello' });
  expect(first.turn).toMatchObject({ outcome: 'completed', text: 'Spent.' });
  const next = await asUser.ask(options, { text: 'hello again' });
  expect(next.turn.outcome).toBe('budget_exceeded');
  expect(next.turn.modelCalls).toBe(0);
  expect(env.model.requestsFor(sessionId)).toHaveLength(1);
  const mine = ran.filter((r) => r.workflowId.endsWith(sessionId));
  expect(mine.map((r) => r.type)).toEqual(['readTurnStart', 'readTurnStart']);
});
