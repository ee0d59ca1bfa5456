import { createInterface } from 'node:readline/promises';
import type { PendingConfirmation } from '../workflows/session-types';

/**
 * Decides a confirmation for the demo: asks on a terminal when allowed,
 * otherwise approves and says so, so an unattended run still finishes.
 */
export async function decideConfirmation(
  confirmation: PendingConfirmation,
  options: { interactive: boolean; narrate: (line: string) => void },
): Promise<{ approved: boolean; reason?: string }> {
  if (!options.interactive || process.stdin.isTTY !== true) {
    options.narrate(`  (demo: no one to ask here, so the demo approves ${confirmation.toolName} itself)`);
    return { approved: true, reason: 'approved automatically by the demo' };
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await rl.question(`  Allow ${confirmation.toolName}? [y/n] `);
    const approved = /^y(es)?$/i.test(answer.trim());
    return { approved, reason: approved ? 'approved at the terminal' : 'declined at the terminal' };
  } finally {
    rl.close();
  }
}
