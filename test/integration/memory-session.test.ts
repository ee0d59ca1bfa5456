import { collectEvents, eventually, sessionOptions, startTestEnv, turnCompleted, uniqueId, type TestEnv } from '../support/test-env';
import { MemoryRepository } from '../../activities/memory/memory-repository';
import { EXTRACTION_SYSTEM_PROMPT } from '../../activities/memory/extraction-prompt';
import { DAY, fact, userSource } from '../support/memory-fixtures';
import { workflowIdFor } from '../../workflows/messages';
import type { ChatRequest, StepResponse } from '../../scripted-model';

let env: TestEnv;
beforeAll(async () => {
  // Memories are seeded with the fixtures' word-hashing vectors, so the worker embeds queries the same way.
  env = await startTestEnv({ name: 'memsession', configEnv: { EMBEDDING_MODEL: 'offline-hash' } });
  await new MemoryRepository(env.db).ensureIndexes();
});
afterAll(async () => {
  await env?.close();
});

const EXTRACTION_MARKER = EXTRACTION_SYSTEM_PROMPT.slice(0, 60);
const systemOf = (req: ChatRequest) => String(req.messages[0]?.content ?? '');
const recalledId = (req: ChatRequest, text: string) => new RegExp(`\\[mem:([0-9a-z]+)\\][^\\n]*${text}`).exec(systemOf(req))?.[1];

async function seedHomeCity(tenant: string, user: string) {
  const now = new Date();
  const scoped = new MemoryRepository(env.db).forNamespace({ tenant, user });
  await scoped.writeFact(fact('home city', 'Lisbon', { source: userSource('earlier', 'turn-1'), statedAt: now, expiresAt: new Date(now.getTime() + 30 * DAY) }), {
    actor: { by: 'import' },
    now,
  });
}

describe('long-term memory in a session', () => {
  it('recalls into its own region, regenerates an answer citing an unknown id once, and keeps the valid citation', async () => {
    const sessionId = uniqueId('s');
    const user = uniqueId('u');
    await seedHomeCity('acme', user);
    env.model.script(
      [
        {
          match: { where: (req) => /## Recalled memories[\s\S]*home city is Lisbon/.test(systemOf(req)) },
          respond: { kind: 'text', text: 'Your home city is Lisbon [mem:zz99].' },
        },
        {
          match: { lastUserMessage: /^\[runtime check\] Your previous answer cited \[mem:zz99\]/ },
          respond: (req): StepResponse => ({ kind: 'text', text: `Your home city is Lisbon [mem:${recalledId(req, 'home city')}].` }),
        },
      ],
      { lane: sessionId },
    );
    const options = sessionOptions(sessionId, { namespace: { tenant: 'acme', user }, memory: { enabled: true } });
    const { turnId } = await env.agent.as(options.namespace).send(options, { text: "What is the user's home city?" });
    const events = await collectEvents(env.agent.as(options.namespace), sessionId, turnCompleted(turnId));
    const done = events.at(-1)!.event;
    const id = recalledId(env.model.requestsFor(sessionId)[0]!.body as ChatRequest, 'home city');
    expect(done).toMatchObject({ type: 'turn_completed', outcome: 'completed', text: `Your home city is Lisbon [mem:${id}].` });
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'memory_recalled' }),
        expect.objectContaining({ type: 'citation_flagged', unknownIds: ['zz99'], action: 'regenerated' }),
      ]),
    );
    // The rejected answer and the correction did not stay in the conversation.
    const view = await env.agent.as(options.namespace).getSession(sessionId);
    expect(view.window[0]!.messages.map((m) => m.content)).toEqual(["What is the user's home city?", `Your home city is Lisbon [mem:${id}].`]);
    expect(view.counters.citationsRegenerated).toBe(1);
    env.model.assertDone(sessionId);
  });

  it('removes and flags a citation that is still unknown after the regeneration, in every form it takes beside the others', async () => {
    const sessionId = uniqueId('s');
    const user = uniqueId('u');
    await seedHomeCity('acme', user);
    env.model.script(
      [
        { respond: { kind: 'text', text: 'Lisbon [mem:zz99].' } },
        // Full-width beside ASCII: the ASCII one was removed and the full-width one shown to the user.
        { match: { lastUserMessage: /^\[runtime check\]/ }, respond: { kind: 'text', text: 'Lisbon, as noted [mem:qq11] 【mem:yy88】.' } },
      ],
      { lane: sessionId },
    );
    const options = sessionOptions(sessionId, { namespace: { tenant: 'acme', user }, memory: { enabled: true } });
    const { turnId } = await env.agent.as(options.namespace).send(options, { text: "What is the user's home city?" });
    const events = await collectEvents(env.agent.as(options.namespace), sessionId, turnCompleted(turnId));
    expect(events.at(-1)!.event).toMatchObject({ type: 'turn_completed', text: 'Lisbon, as noted.' });
    expect(events.filter((e) => e.event.type === 'citation_flagged' && e.event.action === 'removed').map((e) => e.event.type === 'citation_flagged' && e.event.unknownIds)).toEqual([['qq11', 'yy88']]);
    env.model.assertDone(sessionId);
  });

  it('never recalls another user\'s memories into a session', async () => {
    const sessionId = uniqueId('s');
    await seedHomeCity('acme', 'someone-else');
    env.model.script([{ match: { where: (req) => !systemOf(req).includes('## Recalled memories') }, respond: { kind: 'text', text: 'I do not know.' } }], { lane: sessionId });
    const options = sessionOptions(sessionId, { namespace: { tenant: 'acme', user: uniqueId('u') }, memory: { enabled: true } });
    const { turnId } = await env.agent.as(options.namespace).send(options, { text: "What is the user's home city?" });
    expect(await env.agent.as(options.namespace).waitForTurn(sessionId, turnId)).toMatchObject({ text: 'I do not know.' });
    env.model.assertDone(sessionId);
  });

  it('extracts memories when the session is archived', async () => {
    const sessionId = uniqueId('s');
    const user = uniqueId('u');
    env.model.script(
      [
        { respond: { kind: 'text', text: 'Sure, let us plan it.' } },
        {
          match: { systemIncludes: EXTRACTION_MARKER },
          respond: (req): StepResponse => {
            const transcript = req.messages.map((m) => String(m.content ?? '')).join('\n');
            const index = Number(/#(\d+) \[user\] Let's plan the offsite/.exec(transcript)?.[1]);
            return {
              kind: 'json',
              value: {
                candidates: [
                  { kind: 'fact', subject: 'user', predicate: 'team', value: 'platform', text: "The user's team is platform.", sourceMessageIndex: index, fromTool: false, userConfirmed: false },
                ],
              },
            };
          },
        },
      ],
      { lane: sessionId },
    );
    const options = sessionOptions(sessionId, { namespace: { tenant: 'acme', user }, memory: { enabled: true }, limits: { idleTimeoutMs: 1_500 } });
    await env.agent.as(options.namespace).send(options, { text: "Let's plan the offsite for the platform team, which is mine." });
    const result = await env.client.workflow.getHandle(workflowIdFor(sessionId)).result();
    expect(result).toMatchObject({ status: 'archived' });
    const memories = await eventually(async () => {
      const { memories: list } = await new MemoryRepository(env.db).forNamespace({ tenant: 'acme', user }).list();
      return list.length ? list : null;
    }, 'the extracted memory');
    expect(memories.map((m) => m.text)).toEqual(["The user's team is platform."]);
    env.model.assertDone(sessionId);
  });
});

describe('confirmation across extraction passes', () => {
  it('stores what the assistant asked about when the user says yes in the next turn, read by the next pass', async () => {
    const sessionId = uniqueId('s');
    const user = uniqueId('u');
    const question = 'The CRM lists your customer tier as gold. Is that right?';
    const extraction = (answer: (transcript: string) => StepResponse) => ({
      match: { systemIncludes: EXTRACTION_MARKER },
      respond: (req: ChatRequest): StepResponse => answer(req.messages.map((m) => String(m.content ?? '')).join('\n')),
    });
    const seen: string[] = [];
    env.model.script(
      [
        { respond: { kind: 'text', text: question } },
        // Pass 1 ends with the question: nothing confirmed yet, so the model proposes nothing.
        extraction((t) => (seen.push(t), { kind: 'json', value: { candidates: [] } })),
        { respond: { kind: 'text', text: 'Noted.' } },
        // Pass 2 shows the question as an earlier message and the yes as a new one.
        extraction((t) => {
          seen.push(t);
          const asked = Number(/#(\d+) \[assistant\] The CRM lists your customer tier/.exec(t)?.[1]);
          const yes = Number(/#(\d+) \[user\] Yes, that's right/.exec(t)?.[1]);
          return {
            kind: 'json',
            value: {
              candidates: [
                { kind: 'fact', subject: 'user', predicate: 'customer tier', value: 'gold', text: "The user's customer tier is gold.", sourceMessageIndex: asked, fromTool: false, userConfirmed: true, confirmationMessageIndex: yes },
              ],
            },
          };
        }),
      ],
      { lane: sessionId },
    );
    const options = sessionOptions(sessionId, { namespace: { tenant: 'acme', user }, memory: { enabled: true, extractEveryTurns: 1 } });
    const agent = env.agent.as(options.namespace);
    const first = await agent.send(options, { text: 'Which tier am I?' });
    await agent.waitForTurn(sessionId, first.turnId);
    await eventually(() => (seen.length === 1 ? true : null), 'the first extraction pass');
    const second = await agent.send(options, { text: "Yes, that's right." });
    await agent.waitForTurn(sessionId, second.turnId);
    const memories = await eventually(async () => {
      const { memories: list } = await new MemoryRepository(env.db).forNamespace({ tenant: 'acme', user }).list();
      return list.length ? list : null;
    }, 'the confirmed memory');
    expect(seen[1]).toMatch(/Earlier messages, already processed[\s\S]*The CRM lists your customer tier[\s\S]*New messages:[\s\S]*Yes, that's right/);
    expect(memories.map((m) => [m.text, m.source.turnId, m.source.confirmedBy?.turnId])).toEqual([["The user's customer tier is gold.", first.turnId, second.turnId]]);
    env.model.assertDone(sessionId);
    await agent.end(sessionId);
  });
});

describe('the client and memories', () => {
  it('lists a user\'s memories and deletes one, without database access of its own', async () => {
    const user = uniqueId('u');
    await seedHomeCity('acme', user);
    await seedHomeCity('acme', `${user}-other`);
    const agent = env.agent.as({ tenant: 'acme', user });
    const { memories } = await agent.listMemories({ namespace: { tenant: 'acme', user } });
    expect(memories.map((m) => m.text)).toEqual(["The user's home city is Lisbon."]);
    const deleted = await agent.deleteMemory({ namespace: { tenant: 'acme', user }, memoryId: memories[0]!.id, reason: 'user asked' });
    expect(deleted.deleted).toBe(true);
    expect((await agent.listMemories({ namespace: { tenant: 'acme', user } })).memories).toEqual([]);
    // Another user's memory is untouched (an admin of the tenant reads it), and cannot be deleted through this namespace.
    const other = (await env.agent.as({ tenant: 'acme', user: 'ops', roles: ['admin'] }).listMemories({ namespace: { tenant: 'acme', user: `${user}-other` } })).memories;
    expect(other).toHaveLength(1);
    expect((await agent.deleteMemory({ namespace: { tenant: 'acme', user }, memoryId: other[0]!.id })).deleted).toBe(false);
    await expect(agent.deleteMemory({ namespace: { tenant: 'acme', user }, memoryId: 'not-an-id' })).rejects.toThrow(/Invalid memoryId/);
  });
});
