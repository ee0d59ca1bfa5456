/**
 * Runs a scripted model that echoes the last user message, for demos and
 * manual runs without an API key:
 *
 *   npx tsx scripted-model/cli.ts [--port 8787] [--host 127.0.0.1] [--quiet]
 */
import { parseArgs } from 'node:util';
import { lastUserMessage } from './chat-request';
import { ScriptedModelServer } from './server';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      quiet: { type: 'boolean', default: false },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`--port must be an integer between 0 and 65535, got ${values.port}`);
  }

  const server = await ScriptedModelServer.start({
    port,
    host: values.host,
    log: !values.quiet,
    // A small delay per delta so a watching person sees the stream arrive.
    fallback: (req) => ({ kind: 'text', text: `echo: ${lastUserMessage(req) ?? '(no user message)'}`, delayMs: 20 }),
  });
  process.stdout.write(`${server.baseUrl}\n`);

  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`scripted-model: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
