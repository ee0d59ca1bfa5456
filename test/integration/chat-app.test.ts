import { PassThrough } from 'node:stream';
import { ChatApp } from '../../client/chat/chat-app';
import { workflowIdFor } from '../../workflows/messages';
import { eventually, sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * The terminal chat (`npm run chat`) driven through its input and output
 * streams against the real stack.
 */

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv({ name: 'chat-app' });
});
afterAll(async () => {
  await env?.close();
});

const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** A chat on a new session, typed into and read like a terminal, once it has greeted. */
async function openChat(sessionId: string): Promise<{ type(text: string): void; shown(): string; quit(): Promise<void> }> {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString('utf8')));
  const chat = new ChatApp({
    agent: env.agent,
    session: { ...sessionOptions(sessionId), sessionId },
    address: 'test',
    namespace: env.client.options.namespace,
    taskQueue: env.taskQueue,
    uiUrl: null,
    input,
    output: output as unknown as NodeJS.WriteStream,
  });
  const exited = chat.run();
  await eventually(() => shown.includes('your first message starts it'), 'the chat to greet');
  return {
    type: (text) => input.write(text),
    shown: () => shown,
    quit: async () => {
      input.write('/quit\n');
      await exited;
    },
  };
}

it('a session archived while the chat is open and started again by its next message goes on from the archive: nothing shown twice', async () => {
  const sessionId = uniqueId('chat-restore');
  env.model.script(
    [
      { respond: { kind: 'text', text: 'First answer.' } },
      { respond: { kind: 'text', text: 'Second answer.' } },
    ],
    { lane: sessionId },
  );
  const chat = await openChat(sessionId);
  try {
    chat.type('hello\n');
    await eventually(() => chat.shown().includes('First answer.'), 'the first answer');
    await env.agent.end(sessionId);
    await eventually(async () => (await env.client.workflow.getHandle(workflowIdFor(sessionId)).describe()).status.name === 'COMPLETED', 'the session to be archived');
    chat.type('again\n');
    await eventually(() => chat.shown().includes('Second answer.'), 'the second answer');
    expect(chat.shown()).toContain('the session had been archived: this message started it again');
    // Before, the chat read the restored session from offset 0 and printed the archived turn again.
    await new Promise((r) => setTimeout(r, 300));
    expect(occurrences(chat.shown(), 'First answer.')).toBe(1);
    expect(occurrences(chat.shown(), 'Second answer.')).toBe(1);
  } finally {
    await chat.quit();
  }
}, 60_000);

it('a session whose run was terminated (nothing archived) starts afresh with the next message, and the chat shows its answer', async () => {
  const sessionId = uniqueId('chat-fresh');
  env.model.script(
    [
      { respond: { kind: 'text', text: 'Before the end.' } },
      { respond: { kind: 'text', text: 'After a fresh start.' } },
    ],
    { lane: sessionId },
  );
  const chat = await openChat(sessionId);
  try {
    chat.type('hello\n');
    await eventually(() => chat.shown().includes('Before the end.'), 'the first answer');
    await env.client.workflow.getHandle(workflowIdFor(sessionId)).terminate('test: gone without an archive');
    chat.type('again\n');
    await eventually(() => chat.shown().includes('After a fresh start.'), 'the answer of the fresh session');
    expect(chat.shown()).toContain('the session had been archived: this message started it again');
    // It did start afresh: its stream began again at 0, below where the chat had read to.
    expect((await env.agent.getSession(sessionId)).counters.turns).toBe(1);
  } finally {
    await chat.quit();
  }
}, 60_000);
