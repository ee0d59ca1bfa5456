import { log } from '@temporalio/workflow';
import { PRINCIPAL_REQUIRED, refusalFor, type Principal, type SessionAction } from './principal';
import type { SessionRun } from './session-run';
import { isPatched } from './patches';

/**
 * Signals from a caller that may not act are ignored, logged and counted in
 * `signalsUnauthorized`. Histories recorded before `principal-required`
 * hold signals without a principal that the session obeyed; on their replay
 * `patched` answers false there and they are obeyed again.
 */
export function signalGuard(run: SessionRun): (principal: Principal | undefined, action: SessionAction, signal: string) => boolean {
  return (principal, action, signal) => {
    const refused = refusalFor(run.owner, principal, action);
    if (!refused || !isPatched(PRINCIPAL_REQUIRED)) return true;
    log.warn(`Ignoring a signal: ${refused}`, { signal });
    run.ignoreUnauthorizedSignal();
    return false;
  };
}
