import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { behaviourOf, hasWorkflowTaskFailure, historyFiles } from './corpus';
import { readHistoryFile } from './history-json';

/**
 * The recorded corpus replayed against today's workflow code: a change that
 * would break a session already running in production (a different command
 * order, a removed activity, a timer that moved) fails here, before deploy.
 * Re-record with `npm run replay:record` only when the change is meant to be
 * incompatible and is guarded by patched() or a new deployment version; see
 * docs/safe-workflow-changes.md.
 */

// Warnings stay on: a replay failure is logged with the event it tripped on.
Runtime.install({ logger: new DefaultLogger('WARN') });

const MIN_HISTORIES = 25;
const files = historyFiles();

const workerOptions = (): ReplayWorkerOptions =>
  process.env.WORKFLOW_BUNDLE_PATH ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH } } : { workflowsPath: require.resolve('../../workflows') };

describe('the recorded history corpus', () => {
  it(`holds at least ${MIN_HISTORIES} histories, one per behaviour`, () => {
    expect(files.length).toBeGreaterThanOrEqual(MIN_HISTORIES);
  });

  it('holds no failed workflow task: every recording is of a healthy session', () => {
    const failed = files.filter((f) => hasWorkflowTaskFailure(readHistoryFile(f))).map(behaviourOf);
    expect(failed).toEqual([]);
  });

  it('replays every history against the current workflow code without a nondeterminism error', async () => {
    const histories = files.map((f) => ({ workflowId: `replay-${behaviourOf(f)}`, history: readHistoryFile(f) }));
    const failures: Array<{ behaviour: string; error: string }> = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories(workerOptions(), histories)) {
      replayed += 1;
      if (result.error) failures.push({ behaviour: result.workflowId.replace(/^replay-/, ''), error: `${result.error.name}: ${result.error.message}` });
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(files.length);
  });
});
