import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { readModelPrompts } from '../client/model-prompts';
import { dataConverterFor } from '../codec/data-converter';
import { loadConfig } from '../workers/config';
import { temporalTransportOptions } from '../workers/temporal-connection-options';

/**
 * `npm run prompt -- <sessionId> [--turn turn-2] [--step 1] [--run <runId>] [--json]`:
 * prints what the model was sent, call by call, rebuilt from the session's
 * history (model calls carry their prompt by reference: the Web UI shows ids
 * and new parts; this shows each prompt whole). Uses the worker's settings
 * (TEMPORAL_*, PAYLOAD_ENCRYPTION_KEYS to read encrypted histories).
 */
async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { turn: { type: 'string' }, step: { type: 'string' }, run: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const sessionId = positionals[0];
  if (!sessionId) {
    process.stderr.write('usage: npm run prompt -- <sessionId> [--turn <turnId>] [--step <n>] [--run <runId>] [--json]\n');
    process.exit(64);
  }
  // Only the Temporal and encryption settings matter here; the model's are filled in so they need not be set.
  const config = loadConfig({ ...process.env, OPENAI_BASE_URL: process.env.OPENAI_BASE_URL?.trim() || 'http://127.0.0.1:9/v1' });
  const connection = await Connection.connect({ address: config.temporal.address, ...temporalTransportOptions(config.temporal) });
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace, dataConverter: dataConverterFor(config.encryption) });
    const prompts = (await readModelPrompts(client, sessionId, values.run)).filter(
      (p) => (values.turn === undefined || p.turnId === values.turn) && (values.step === undefined || p.step === Number(values.step)),
    );
    if (values.json) {
      process.stdout.write(`${JSON.stringify(prompts)}\n`);
      return;
    }
    for (const p of prompts) {
      process.stdout.write(
        `\n=== ${p.turnId} step ${p.step} (run ${p.runId}; input ${p.inputBytes} bytes${p.byReference ? ', by reference' : ''}${p.failedAs ? `; failed as ${p.failedAs}` : ''})\n`,
      );
      for (const m of p.messages) {
        const calls = 'tool_calls' in m && m.tool_calls ? ` -> ${m.tool_calls.map((c) => `${c.function.name}(${c.function.arguments})`).join(', ')}` : '';
        process.stdout.write(`[${m.role}] ${m.content ?? ''}${calls}\n`);
      }
      process.stdout.write(`tools: ${p.tools.map((t) => t.name).join(', ') || '(none)'}\n`);
    }
    if (prompts.length === 0) process.stdout.write('no model calls matched\n');
  } finally {
    await connection.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`prompt: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
