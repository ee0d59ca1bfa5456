/**
 * Local stack for development and tests: a Temporal dev server and a
 * MongoDB-compatible server, started once and shared.
 *
 *   tsx scripts/stack.ts up       start what is not running, print what runs where
 *   tsx scripts/stack.ts status   show each component (always exits 0)
 *   tsx scripts/stack.ts down     stop only what `up` started
 *
 * Jest's global setup imports ensureStack() from here, so this module must
 * also load as plain CommonJS without running the CLI.
 */
import { errorMessage } from './stack/errors';
import { ensureStack } from './stack/ensure-stack';
import { formatStatus } from './stack/format';
import { resolveStackPaths } from './stack/paths';
import { stackStatus } from './stack/stack-status';
import { stopStack } from './stack/stop-stack';

export { ensureStack, stackStatus, stopStack };
export type { EnsureStackOptions } from './stack/ensure-stack';
export type { StackStatusOptions } from './stack/stack-status';
export type { StopStackOptions } from './stack/stop-stack';
export type { ComponentView, StackInfo, StackStatus } from './stack/types';

const USAGE = 'usage: tsx scripts/stack.ts up|down|status';

async function main(args: readonly string[]): Promise<number> {
  const command = args[0];
  switch (command) {
    case 'up':
      await ensureStack();
      return 0;
    case 'down':
      await stopStack();
      return 0;
    case 'status': {
      const status = await stackStatus();
      for (const line of formatStatus(status, resolveStackPaths())) process.stdout.write(`${line}\n`);
      return 0;
    }
    default:
      process.stderr.write(`${command ? `unknown command: ${command}\n` : ''}${USAGE}\n`);
      return 2;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`stack: ${errorMessage(error)}\n`);
      process.exitCode = 1;
    },
  );
}
