import { condition, sleep } from '@temporalio/workflow';
import { nowMs } from './workflow-clock';
import { inBaseline } from './patches';

/**
 * Patch id: the idle timeout is one timer that outlives turns instead of a
 * timer started after every turn and cancelled by the next message. Runs
 * from before it keep a timer per wait.
 */
export const IDLE_TIMER_OUTLIVES_TURNS = inBaseline('idle-timer-outlives-turns');

/**
 * The session's idle timeout, kept by one timer at a time.
 *
 * `condition(ready, timeout)` starts a timer each time the session waits and
 * cancels it when a message comes: two history events and a server-side
 * timer task per turn, for a timeout that almost never fires. Here a timer
 * runs until its deadline whatever happens meanwhile. When it fires it looks
 * at how long the session has been waiting: long enough and the wait ends;
 * less (turns ran since it started) and it starts one more timer for the
 * rest; not waiting at all (a turn is running) and the next wait starts one.
 * A session busy more often than its timeout has a timer or two per timeout
 * period, not one per turn, and still ends exactly `timeoutMs` after it
 * began to wait. Deterministic: it reads only workflow time.
 */
export class IdleDeadline {
  /** When the session began its current wait; undefined while it is not waiting. */
  private waitingSince: number | undefined;
  private timerRunning = false;
  private expired = false;

  constructor(private readonly timeoutMs: number) {}

  /** Resolves true once `ready` holds, or false once the session has waited `timeoutMs` for it. */
  async wait(ready: () => boolean): Promise<boolean> {
    if (ready()) {
      // Still through condition(), so a cancelled workflow fails here as it would waiting, before it runs another turn.
      await condition(ready);
      return true;
    }
    this.waitingSince = nowMs();
    this.expired = false;
    this.startTimer();
    try {
      await condition(() => ready() || this.expired);
    } finally {
      this.waitingSince = undefined;
    }
    return ready();
  }

  private startTimer(): void {
    if (this.timerRunning || this.waitingSince === undefined) return;
    this.timerRunning = true;
    const left = this.waitingSince + this.timeoutMs - nowMs();
    sleep(left).then(
      () => {
        this.timerRunning = false;
        if (this.waitingSince === undefined) return;
        if (nowMs() - this.waitingSince >= this.timeoutMs) this.expired = true;
        else this.startTimer();
      },
      // Cancelled with the workflow: the wait it guarded is cancelled too.
      () => {
        this.timerRunning = false;
      },
    );
  }
}
