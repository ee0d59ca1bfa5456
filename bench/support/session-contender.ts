import type { AgentClient } from '../../client/agent-client';
import { workflowIdFor } from '../../workflows/messages';
import type { SessionOptionsInput } from '../../workflows/session-types';

/** Drives session workflows one timed turn at a time, starting a new session every `turnsPerSession` turns. */
export class SessionContender {
  /** Every session started, in order. */
  readonly all: string[] = [];
  private turnsInSession = 0;

  constructor(
    private readonly agent: AgentClient,
    private readonly prefix: string,
    private readonly steps: number,
    private readonly turnsPerSession: number,
  ) {}

  /**
   * Starts the next session. The previous one is ended first and its archive
   * awaited, untimed: that once-a-session work (the archive's activity and
   * its MongoDB writes) must not land in the measured turns that follow, the
   * new session's or another contender's.
   */
  async newSession(): Promise<void> {
    const previous = this.all.at(-1);
    if (previous) {
      await this.agent.end(previous, 'benchmark moved on').catch(() => undefined);
      await this.closed(previous);
    }
    this.all.push(`${this.prefix}-${this.all.length + 1}`);
    this.turnsInSession = 0;
  }

  /** One turn, send to result, in ms; throws when it did not run as scripted. */
  async turn(text: string): Promise<number> {
    if (this.all.length === 0 || this.turnsInSession >= this.turnsPerSession) await this.newSession();
    const sessionId = this.all.at(-1) as string;
    const options: SessionOptionsInput = {
      sessionId,
      namespace: { tenant: 'bench', user: 'loop' },
      channel: 'bench',
      limits: { maxSteps: this.steps },
      // The plain loop has no long-term memory either: compare the ReAct loop alone.
      memory: { enabled: false },
    };
    const started = performance.now();
    const { turnId, turn: result } = await this.agent.ask(options, { text });
    const ms = performance.now() - started;
    this.turnsInSession++;
    if (result.outcome !== 'completed' || result.modelCalls !== this.steps || result.toolCalls !== this.steps - 1) {
      throw new Error(`workflow turn ${sessionId}/${turnId} did not run as scripted: ${JSON.stringify(result)}`);
    }
    return ms;
  }

  /** Ends every session and waits for each to archive; one that does not is terminated, never left waiting on a dead queue. */
  async endAll(): Promise<void> {
    const last = this.all.at(-1);
    if (last) await this.agent.end(last, 'benchmark done').catch(() => undefined);
    await Promise.all(this.all.map((sessionId) => this.closed(sessionId)));
  }

  /** Waits up to 20 s for a session's run to close; one that does not is terminated. */
  private async closed(sessionId: string): Promise<void> {
    const handle = this.agent.client.workflow.getHandle(workflowIdFor(sessionId));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), 20_000);
    });
    const closed = await Promise.race([handle.result().then(() => true, () => true), timeout]);
    clearTimeout(timer);
    if (!closed) await handle.terminate('the benchmark is over and the session did not end').catch(() => undefined);
  }
}
