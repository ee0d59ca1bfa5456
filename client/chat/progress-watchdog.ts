/**
 * Calls `onQuiet` once when nothing has happened for `quietMs` since the last
 * `touch`; `reset` (a new message) allows one more call.
 */
export class ProgressWatchdog {
  private timer: NodeJS.Timeout | null = null;
  private fired = false;

  constructor(
    private readonly quietMs: number,
    private readonly onQuiet: () => void,
  ) {}

  get quietSeconds(): number {
    return Math.round(this.quietMs / 1000);
  }

  /** A new message went out: watch it, and allow one more hint. */
  reset(): void {
    this.fired = false;
    this.touch();
  }

  /** Something happened: the quiet period starts again. */
  touch(): void {
    this.stop();
    if (this.fired) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.fired = true;
      this.onQuiet();
    }, this.quietMs);
    // A pending hint must not keep the process alive on its own.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
