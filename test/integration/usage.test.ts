import { scrape, total } from '../../api/prometheus-text';
import { METRICS } from '../../workflows/metric-catalog';
import { mintToken, TokenBook } from '../../api/auth';
import { createApi, listen } from '../../api/server';
import { USAGE_COLLECTION, UsageStore } from '../../activities/usage/usage-store';
import { probeTools, type ProbeLog } from '../support/probe-tools';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * Token usage and cost per session, user and tenant, from the model's own
 * usage numbers and a price table, read through the client and the HTTP API.
 */

const log: ProbeLog = { runs: [] };
let env: TestEnv;
const PRICES = { scripted: { inputPerMillion: 2.5, outputPerMillion: 10 } };

beforeAll(async () => {
  env = await startTestEnv({ name: 'usage', extraTools: probeTools(log), pricing: { prices: PRICES, currency: 'EUR' } });
});
afterAll(async () => {
  await env?.close();
});

it('records each model call once with the model\'s usage, and sums tokens and cost per session, user and tenant', async () => {
  const tenant = uniqueId('tn');
  const [ana, bob] = ['ana', 'bob'];
  const s1 = uniqueId('use');
  const s2 = uniqueId('use');
  env.model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: 'n1', name: 'local_note', arguments: { text: 'x' } }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: 'Noted.' } },
      { respond: { kind: 'text', text: 'And again.' } },
    ],
    { lane: s1 },
  );
  env.model.script([{ respond: { kind: 'text', text: 'Hi Bob.' } }], { lane: s2 });
  const asAna = env.agent.as({ tenant, user: ana });
  const asBob = env.agent.as({ tenant, user: bob });
  await asAna.ask(sessionOptions(s1, { namespace: { tenant, user: ana } }), { text: 'note x' });
  await asAna.ask(sessionOptions(s1, { namespace: { tenant, user: ana } }), { text: 'again' });
  await asBob.ask(sessionOptions(s2, { namespace: { tenant, user: bob } }), { text: 'hi' });

  // What the model reported, call by call, as stored (behind each call, a batch at a time: settled first).
  await env.worker.writesSettled();
  const raw = await env.db.collection<{ user: string; sessionId: string; inputTokens: number; outputTokens: number }>(USAGE_COLLECTION).find({ tenant }).toArray();
  expect(raw).toHaveLength(4);
  const sum = (rows: typeof raw, k: 'inputTokens' | 'outputTokens') => rows.reduce((n, r) => n + r[k], 0);
  const anaRows = raw.filter((r) => r.user === ana);
  expect(anaRows).toHaveLength(3);
  expect(raw.every((r) => r.inputTokens > 0 && r.outputTokens > 0)).toBe(true);
  const cost = (rows: typeof raw) => (sum(rows, 'inputTokens') * 2.5 + sum(rows, 'outputTokens') * 10) / 1_000_000;

  const mine = await asAna.getUsage({ tenant, user: ana });
  expect(mine.currency).toBe('EUR');
  expect(mine.total).toEqual({ inputTokens: sum(anaRows, 'inputTokens'), outputTokens: sum(anaRows, 'outputTokens'), cost: expect.closeTo(cost(anaRows), 12), calls: 3 });
  expect(mine.rows).toHaveLength(1);
  expect(mine.rows[0]).toMatchObject({ model: 'scripted', day: new Date().toISOString().slice(0, 10) });
  expect(mine.unpriced).toEqual([]);
  const session = await asAna.getUsage({ tenant, sessionId: s1 });
  expect(session.total.calls).toBe(3);
  // A user sees their own only; the tenant's admin sees anyone's and the total.
  await expect(asAna.getUsage({ tenant, user: bob })).rejects.toMatchObject({ name: 'NotAuthorizedError' });
  await expect(asAna.getUsage({ tenant })).rejects.toMatchObject({ name: 'NotAuthorizedError' });
  await expect(env.agent.as({ tenant: 'other', user: ana }).getUsage({ tenant, user: ana })).rejects.toMatchObject({ name: 'NotAuthorizedError' });
  const admin = env.agent.as({ tenant, user: 'root', roles: ['admin'] });
  const whole = await admin.getUsage({ tenant });
  expect(whole.total).toEqual({ inputTokens: sum(raw, 'inputTokens'), outputTokens: sum(raw, 'outputTokens'), cost: expect.closeTo(cost(raw), 12), calls: 4 });
  expect((await admin.getUsage({ tenant, user: bob })).total.calls).toBe(1);
  await expect(asAna.getUsage({ tenant, user: ana, days: 0 })).rejects.toMatchObject({ name: 'SessionValidationError' });

  // Through the HTTP API, as the same principals.
  const tokens = [mintToken({ tenant, user: ana }), mintToken({ tenant, user: 'root', roles: ['admin'] })];
  const api = createApi({ agent: env.agent, tokens: new TokenBook(tokens.map((t) => t.entry)) });
  const server = await listen(api.app, 0);
  try {
    const get = (path: string, i: number) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${tokens[i]!.token}` } });
    const own = (await (await get('/v1/usage?days=7', 0)).json()) as { total: { calls: number; cost: number } };
    expect(own.total.calls).toBe(3);
    expect((await get(`/v1/usage?sessionId=${s1}`, 0)).status).toBe(200);
    expect((await get('/v1/usage?all=true', 0)).status).toBe(403);
    expect((await get(`/v1/usage?user=${bob}`, 0)).status).toBe(403);
    const tenantWide = (await (await get('/v1/usage?all=true', 1)).json()) as { total: { calls: number } };
    expect(tenantWide.total.calls).toBe(4);
    expect((await get('/v1/usage?days=0', 0)).status).toBe(422);
  } finally {
    api.hub.close();
    await server.close();
  }
}, 90_000);

it('a retried activity records nothing twice (the same scheduled activity id)', async () => {
  const store = new UsageStore(env.db);
  const tenant = uniqueId('tn');
  const event = { id: `wf/run/${uniqueId('a')}`, tenant, user: 'u', sessionId: 's', model: 'm', at: new Date(), inputTokens: 10, outputTokens: 5 };
  expect(await store.record(event)).toEqual({ recorded: true });
  expect(await store.record({ ...event, inputTokens: 999 })).toEqual({ recorded: false });
  const summary = await store.summarize({ tenant, days: 1 });
  expect(summary.total).toEqual({ inputTokens: 10, outputTokens: 5, cost: 0, calls: 1 });
  expect(summary.unpriced).toEqual(['m']);
  expect(summary.rows[0]!.cost).toBeNull();
});

describe('budgets', () => {
  let budgeted: TestEnv;
  const tenant = uniqueId('tb');
  const paying = uniqueId('tc');
  const rich = uniqueId('td');
  beforeAll(async () => {
    budgeted = await startTestEnv({
      name: 'budget',
      extraTools: probeTools(log),
      pricing: { prices: PRICES, currency: 'EUR' },
      // A user's token limit, and a whole tenant's cost limit below what one scripted call costs.
      budgets: { tenants: { [paying]: { costPerDay: 0.00001 }, [rich]: { costPerDay: 1_000 } }, users: { [`${tenant}/ana`]: { tokensPerDay: 1 } } },
    });
  });
  afterAll(async () => {
    await budgeted?.close();
  });

  it('a turn that spends the day\'s budget ends before its next model call, after its tools finish, with a clear outcome and event; the next turn calls no model', async () => {
    const sessionId = uniqueId('budget');
    const options = sessionOptions(sessionId, { namespace: { tenant, user: 'ana' } });
    budgeted.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'b1', name: 'local_note', arguments: { text: 'y' } }] } },
        { respond: { kind: 'text', text: 'never asked for' } },
      ],
      { lane: sessionId },
    );
    const agent = budgeted.agent.as({ tenant, user: 'ana' });
    const turnsEnded = async () => total(await scrape(budgeted.metricsUrl), METRICS.turns.name, { taskQueue: budgeted.taskQueue, outcome: 'budget_exceeded' });
    const endedBefore = await turnsEnded();
    const first = await agent.ask(options, { text: 'note y' });
    expect(first.turn.outcome).toBe('budget_exceeded');
    expect(first.turn.error).toMatch(/BudgetExceeded: the daily token budget is spent \(user .*\/ana: 1 tokens a day\)/);
    expect(first.turn.toolCalls).toBe(1);
    expect(log.runs.filter((r) => r.key.startsWith(`${sessionId}:`))).toHaveLength(1);
    expect(budgeted.model.requestsFor(sessionId)).toHaveLength(1);

    const second = await agent.ask(options, { text: 'and now?' });
    expect(second.turn.outcome).toBe('budget_exceeded');
    expect(second.turn.modelCalls).toBe(0);
    expect(budgeted.model.requestsFor(sessionId)).toHaveLength(1);
    expect((await turnsEnded()) - endedBefore).toBe(2);

    const events: string[] = [];
    for await (const e of agent.events(sessionId)) {
      if (e.event.type === 'error') events.push(e.event.errorType);
      if (e.event.type === 'turn_completed') events.push(`${e.event.turnId}:${e.event.outcome}`);
      if (e.event.type === 'turn_completed' && e.event.turnId === second.turnId) break;
    }
    expect(events).toEqual(['BudgetExceeded', `${first.turnId}:budget_exceeded`, 'BudgetExceeded', `${second.turnId}:budget_exceeded`]);
    // Another user of the tenant has no budget and is not held.
    const other = uniqueId('budget');
    budgeted.model.script([{ respond: { kind: 'text', text: 'Free.' } }], { lane: other });
    const free = await budgeted.agent.as({ tenant, user: 'bob' }).ask(sessionOptions(other, { namespace: { tenant, user: 'bob' } }), { text: 'hi' });
    expect(free.turn.outcome).toBe('completed');
    await agent.end(sessionId);
  }, 60_000);

  it('a tenant\'s cost budget holds every user of the tenant, priced from the price table', async () => {
    const sessionId = uniqueId('budget-cost');
    budgeted.model.script(
      [
        { respond: { kind: 'tool_calls', calls: [{ id: 'c1', name: 'local_note', arguments: { text: 'z' } }] } },
        { respond: { kind: 'text', text: 'never asked for' } },
      ],
      { lane: sessionId },
    );
    const first = await budgeted.agent.as({ tenant: paying, user: 'carol' }).ask(sessionOptions(sessionId, { namespace: { tenant: paying, user: 'carol' } }), { text: 'note z' });
    expect(first.turn.outcome).toBe('budget_exceeded');
    expect(first.turn.error).toMatch(/BudgetExceeded: the daily cost budget is spent \(tenant .*: 0\.00001 EUR a day\)/);
    expect(first.turn.toolCalls).toBe(1);
    expect(budgeted.model.requestsFor(sessionId)).toHaveLength(1);
    const used = await budgeted.agent.as({ tenant: paying, user: 'carol' }).getUsage({ tenant: paying, user: 'carol', days: 1 });
    expect(used.total.cost).toBeGreaterThan(0.00001);
    // Another user of the same tenant is held too, before any model call.
    const other = uniqueId('budget-cost');
    const second = await budgeted.agent.as({ tenant: paying, user: 'dan' }).ask(sessionOptions(other, { namespace: { tenant: paying, user: 'dan' } }), { text: 'hi' });
    expect(second.turn.outcome).toBe('budget_exceeded');
    expect(second.turn.modelCalls).toBe(0);
    expect(budgeted.model.requestsFor(other)).toHaveLength(0);
  }, 60_000);

  it('under a cost budget, a session that names a model without a price gets no model call, told why; the priced default model still answers', async () => {
    const as = budgeted.agent.as({ tenant: rich, user: 'erin' });
    const unpriced = uniqueId('budget-unpriced');
    const turn = (await as.ask(sessionOptions(unpriced, { namespace: { tenant: rich, user: 'erin' }, model: { name: 'free-lunch-model' } }), { text: 'hi' })).turn;
    expect(turn).toMatchObject({ outcome: 'budget_exceeded', modelCalls: 0 });
    expect(turn.error).toMatch(/BudgetExceeded: .*tenant .*: 1000 EUR a day; the session's model "free-lunch-model" has no price in MODEL_PRICES/);
    expect(budgeted.model.requestsFor(unpriced)).toHaveLength(0);
    const priced = uniqueId('budget-priced');
    budgeted.model.script([{ respond: { kind: 'text', text: 'Priced.' } }], { lane: priced });
    expect((await as.ask(sessionOptions(priced, { namespace: { tenant: rich, user: 'erin' } }), { text: 'hi' })).turn).toMatchObject({ outcome: 'completed', text: 'Priced.' });
    // An empty model name is the default model for the call as for the budget: priced, recorded under its name.
    const unnamed = uniqueId('budget-unnamed');
    budgeted.model.script([{ respond: { kind: 'text', text: 'Default.' } }], { lane: unnamed });
    expect((await as.ask(sessionOptions(unnamed, { namespace: { tenant: rich, user: 'erin' }, model: { name: '' } }), { text: 'hi' })).turn).toMatchObject({ outcome: 'completed', text: 'Default.' });
    const sent = budgeted.model.requestsFor(unnamed)[0]!.body as { model: string };
    expect(sent.model).toBe(budgeted.config.model.name);
  }, 60_000);
});
