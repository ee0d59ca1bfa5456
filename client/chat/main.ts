/**
 * `npm run chat`: an interactive terminal chat with one session.
 *
 *   npm run chat -- [--session <id>] [--user <user>] [--tenant <tenant>]
 *
 * Connects to TEMPORAL_ADDRESS (default 127.0.0.1:7233), namespace
 * TEMPORAL_NAMESPACE (default "default") and task queue TEMPORAL_TASK_QUEUE
 * (default "durable-agent"). A worker must be running: `npm run worker`.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { AgentClient } from '../agent-client';
import { dataConverterFor } from '../../codec/data-converter';
import { keyListProblems, parseKeyList } from '../../codec/encryption-keys';
import { SessionOptions } from '../../workflows/session-types';
import { temporalTransportOptions } from '../../workers/temporal-connection-options';
import { ChatApp } from './chat-app';

const USAGE = 'usage: npm run chat -- [--session <id>] [--user <user>] [--tenant <tenant>]';

class UsageError extends Error {}

function settings() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        session: { type: 'string' },
        user: { type: 'string' },
        tenant: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const env = process.env;
  const address = env.TEMPORAL_ADDRESS?.trim() || '127.0.0.1:7233';
  if (!/^[^\s:]+:\d{1,5}$/.test(address)) throw new UsageError(`TEMPORAL_ADDRESS must be host:port, got "${address}"`);
  const session = SessionOptions.safeParse({
    sessionId: values.session ?? `chat-${randomUUID().slice(0, 8)}`,
    namespace: { tenant: values.tenant ?? 'local', user: values.user ?? (env.USER || 'cli-user') },
    channel: 'cli',
  });
  if (!session.success) {
    throw new UsageError(session.error.issues.map((i) => `--${String(i.path.at(-1))}: ${i.message}`).join('; '));
  }
  // The dev server's UI sits beside it; elsewhere only TEMPORAL_UI_URL says where the UI is.
  const local = /^(127\.0\.0\.1|localhost):7233$/.test(address);
  // The workers' payload encryption keys; without them every session payload reads as ciphertext.
  const encryption = { keys: env.PAYLOAD_ENCRYPTION_KEYS?.trim() || undefined, keyId: env.PAYLOAD_ENCRYPTION_KEY_ID?.trim() || undefined };
  const keyProblems = encryption.keys ? keyListProblems(encryption.keys) : [];
  if (keyProblems.length > 0) throw new UsageError(`PAYLOAD_ENCRYPTION_KEYS: ${keyProblems.join('; ')}`);
  if (encryption.keyId && !parseKeyList(encryption.keys ?? '').has(encryption.keyId)) {
    throw new UsageError(`PAYLOAD_ENCRYPTION_KEY_ID names key id "${encryption.keyId}", which is not among PAYLOAD_ENCRYPTION_KEYS`);
  }
  // TLS / mTLS / API key: the same variables the workers read (see README, "Connecting to a real cluster").
  const opt = (name: string) => env[name]?.trim() || undefined;
  const tlsFlag = opt('TEMPORAL_TLS');
  if (tlsFlag !== undefined && tlsFlag !== 'true' && tlsFlag !== 'false') throw new UsageError(`TEMPORAL_TLS must be true or false, got "${tlsFlag}"`);
  if (!opt('TEMPORAL_TLS_CERT_PATH') !== !opt('TEMPORAL_TLS_KEY_PATH')) {
    throw new UsageError('set both TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH for mTLS, or neither');
  }
  let transport;
  try {
    transport = temporalTransportOptions({
      tls: tlsFlag === 'true',
      tlsServerName: opt('TEMPORAL_TLS_SERVER_NAME'),
      tlsCaPath: opt('TEMPORAL_TLS_CA_PATH'),
      tlsCertPath: opt('TEMPORAL_TLS_CERT_PATH'),
      tlsKeyPath: opt('TEMPORAL_TLS_KEY_PATH'),
      apiKey: opt('TEMPORAL_API_KEY'),
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return {
    address,
    transport,
    encryption,
    namespace: env.TEMPORAL_NAMESPACE?.trim() || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE?.trim() || 'durable-agent',
    uiUrl: env.TEMPORAL_UI_URL?.trim() || (local ? 'http://127.0.0.1:8233' : null),
    session: { ...session.data, sessionId: session.data.sessionId },
  };
}

async function main(): Promise<number> {
  const config = settings();
  let agent: AgentClient;
  try {
    agent = await AgentClient.connect({
      address: config.address,
      namespace: config.namespace,
      taskQueue: config.taskQueue,
      dataConverter: dataConverterFor(config.encryption),
      ...config.transport,
      // The chat acts as the user of --tenant/--user: the person at the terminal is trusted like any backend.
      principal: { tenant: config.session.namespace.tenant, user: config.session.namespace.user },
    });
  } catch (err) {
    throw new Error(
      `cannot reach Temporal at ${config.address} (${err instanceof Error ? err.message : String(err)}). ` +
        'Start the local stack with `npm run stack:up`, or set TEMPORAL_ADDRESS.',
    );
  }
  const app = new ChatApp({ agent, ...config });
  const code = await app.run();
  await agent.client.connection.close().catch(() => undefined);
  return code;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`chat: ${message}\n${err instanceof UsageError ? `${USAGE}\n` : ''}`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
