/**
 * `npm run demo`: one command that shows a durable agent session end to end.
 *
 * Brings up the local stack (Temporal dev server + a MongoDB-compatible
 * server; left running afterwards), starts a worker in this process, and
 * plays a short conversation: streamed text, two parallel tool calls, a
 * destructive call held for confirmation, and an interrupted answer. Without
 * OPENAI_API_KEY or OPENAI_BASE_URL a scripted OpenAI-compatible model plays
 * the model's part; with them, the configured model does.
 *
 * Set DEMO_AUTO_APPROVE=1 to approve confirmations without asking even on a terminal.
 */
import { randomUUID } from 'node:crypto';
import { Runtime } from '@temporalio/worker';
import { AgentClient } from '../client/agent-client';
import { EventRenderer } from '../client/chat/render-events';
import { paint } from '../client/chat/terminal-style';
import { ensureConfiguredModel } from '../scripts/fetch-embedding-model';
import { ensureStack } from '../scripts/stack';
import { ScriptedModelServer } from '../scripted-model';
import { createAgentWorker, type AgentWorkerHandle } from '../workers/agent-worker';
import { ConfigError, loadConfig } from '../workers/config';
import { dataConverterFor } from '../codec/data-converter';
import { temporalTransportOptions } from '../workers/temporal-connection-options';
import { workflowIdFor } from '../workflows/messages';
import { runDemoSession } from './demo-session';
import { demoScript } from './demo-script';
import { decideConfirmation } from './confirm';
import { demoWorkerLogger } from './worker-logger';

const out = (line: string): void => void process.stdout.write(`${line}\n`);
const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
const s = paint(color);

/** Everything the demo started, stopped in reverse order; safe to call twice. */
class Resources {
  worker: AgentWorkerHandle | null = null;
  workerRun: Promise<void> | null = null;
  model: ScriptedModelServer | null = null;
  agent: AgentClient | null = null;
  /** The demo's session while it may still be open. */
  sessionId: string | null = null;
  private closing: Promise<void> | null = null;

  /** Stops everything; a session still open is terminated, so it never waits on a queue no worker polls. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.agent && this.sessionId) {
        await this.agent.client.workflow
          .getHandle(workflowIdFor(this.sessionId))
          .terminate('the demo stopped before the session ended')
          .catch(() => undefined);
      }
      if (this.worker) {
        await this.worker.shutdown().catch((err: unknown) => out(s.red(`  worker shutdown failed: ${String(err)}`)));
        out(s.dim('  worker stopped'));
      }
      await this.agent?.client.connection.close().catch(() => undefined);
      await this.model?.close();
    })();
    return this.closing;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function main(resources: Resources): Promise<void> {
  const began = Date.now();
  // The worker's own INFO logs would drown the conversation; warnings and errors still show.
  Runtime.install({ logger: demoWorkerLogger() });
  const scripted = !process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL;

  out(s.bold('durable-agent demo'));
  out(s.dim('1/4 local stack'));
  const stack = await ensureStack({ log: (line) => out(s.dim(`  ${line}`)) });

  const sessionId = `demo-${randomUUID().slice(0, 8)}`;
  // A queue of its own, so a worker already running elsewhere never picks up the demo's tasks.
  const taskQueue = `durable-agent-demo-${randomUUID().slice(0, 8)}`;
  out(s.dim('2/4 model'));
  if (scripted) {
    resources.model = await ScriptedModelServer.start();
    resources.model.script(demoScript(), { lane: sessionId });
    out(s.dim(`  no OPENAI_API_KEY or OPENAI_BASE_URL: a scripted OpenAI-compatible model plays the model at ${resources.model.baseUrl}`));
  }
  const config = loadConfig({
    ...process.env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.temporalNamespace,
    MONGODB_URI: stack.mongoUri,
    TEMPORAL_TASK_QUEUE: taskQueue,
    ...(resources.model ? { OPENAI_BASE_URL: resources.model.baseUrl, MODEL_NAME: 'scripted-demo' } : {}),
  });
  if (!scripted) out(s.dim(`  using model "${config.model.name}" at ${config.model.baseUrl}; confirmations are approved automatically`));

  out(s.dim('3/4 worker'));
  await ensureConfiguredModel(config.model.embeddingModel, { log: (line) => out(s.dim(`  ${line}`)) });
  resources.worker = await createAgentWorker(config);
  const workerRun = resources.worker.run();
  resources.workerRun = workerRun;
  // A worker that dies mid-demo must fail the demo, not leave it waiting for events.
  const workerDied = workerRun.then(
    () => Promise.reject(new Error('the worker stopped before the demo finished')),
    (err: unknown) => Promise.reject(new Error(`the worker failed: ${err instanceof Error ? err.message : String(err)}`)),
  );
  workerDied.catch(() => undefined);
  out(s.dim(`  worker polling task queue ${taskQueue} on ${config.temporal.address} (namespace ${config.temporal.namespace})`));

  resources.agent = await AgentClient.connect({
    address: config.temporal.address,
    namespace: config.temporal.namespace,
    taskQueue,
    dataConverter: dataConverterFor(config.encryption),
    ...temporalTransportOptions(config.temporal),
    principal: { tenant: 'demo', user: 'ana' },
  });
  const agent = resources.agent;
  const uiLink = stack.uiUrl ? AgentClient.webUiUrl(stack.uiUrl, config.temporal.namespace, sessionId) : null;
  out(s.dim('4/4 session'));
  out(`  session ${s.bold(sessionId)}${uiLink ? `, watch it live: ${uiLink}` : ''}`);
  resources.sessionId = sessionId;

  const renderer = new EventRenderer({ color });
  const narrate = (line: string): void => renderer.line(line.startsWith('you ›') ? s.bold(line) : s.dim(line));
  const played = runDemoSession({
    agent,
    options: { sessionId, namespace: { tenant: 'demo', user: 'ana' }, channel: 'demo', limits: { confirmationTimeoutMs: 120_000 } },
    renderer,
    narrate,
    decide: (confirmation) => decideConfirmation(confirmation, { interactive: scripted && !process.env.DEMO_AUTO_APPROVE, narrate }),
    strict: scripted,
  });
  const result = await Promise.race([played, workerDied]);

  // The session ends here so it never waits, open, on a queue no worker polls any more.
  const handle = agent.client.workflow.getHandle(workflowIdFor(sessionId));
  if (result.problems.length === 0) {
    await agent.end(sessionId, 'the demo is over');
    await withTimeout(handle.result(), 15_000, 'ending the session');
  } else {
    await handle.terminate('the demo failed').catch(() => undefined);
  }
  resources.sessionId = null;
  result.feed?.stop();

  const view = await agent.getSession(sessionId).catch(() => null);
  out('');
  if (view) {
    const c = view.counters;
    out(
      s.dim(
        `session ${sessionId}: ${view.status}, version ${view.version}, ${c.turns} turns, ${c.modelCalls} model calls, ` +
          `${c.toolCalls} tool calls, ${c.confirmationsRequested} confirmation(s), ${c.interrupts} interrupt(s)`,
      ),
    );
  }
  if (resources.model) {
    try {
      resources.model.assertDone(sessionId);
    } catch (err) {
      result.problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  for (const note of result.notes) out(s.yellow(`note: ${note}`));
  if (uiLink) out(`Web UI: ${uiLink}`);
  await resources.close();

  if (result.problems.length > 0) {
    throw new Error(`the demo did not show everything it should:\n${result.problems.map((p) => `  - ${p}`).join('\n')}`);
  }
  out(s.green(`demo finished in ${((Date.now() - began) / 1000).toFixed(1)} s.`) + ' The local stack keeps running: `npm run stack:down` stops it.');
}

const resources = new Resources();
process.once('SIGINT', () => {
  out('\ninterrupted: stopping the worker (the local stack keeps running; `npm run stack:down` stops it)');
  void resources.close().finally(() => process.exit(130));
});

main(resources).then(
  () => process.exit(0),
  async (err: unknown) => {
    await resources.close().catch(() => undefined);
    const message = err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err);
    process.stderr.write(`\n${s.red('demo failed:')} ${message}\n`);
    process.exit(1);
  },
);
