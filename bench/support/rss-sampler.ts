import { readFile } from 'node:fs/promises';

/** A process's resident set size in MB, from /proc/<pid>/status (VmRSS); undefined once it is gone. */
export async function rssMb(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/** Samples one process's RSS every `everyMs` and keeps the peak since the last `resetPeak`. */
export class RssSampler {
  private peak = 0;
  private latest: number | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly pid: number,
    everyMs = 200,
  ) {
    this.timer = setInterval(() => void this.sample(), everyMs);
    this.timer.unref();
    void this.sample();
  }

  private async sample(): Promise<void> {
    const mb = await rssMb(this.pid);
    this.latest = mb;
    if (mb !== undefined && mb > this.peak) this.peak = mb;
  }

  /** The highest RSS seen since the last reset, in MB (the current one if none was seen yet). */
  async peakMb(): Promise<number> {
    await this.sample();
    return this.peak;
  }

  /** The current RSS in MB; undefined once the process is gone. */
  async nowMb(): Promise<number | undefined> {
    await this.sample();
    return this.latest;
  }

  resetPeak(): void {
    this.peak = this.latest ?? 0;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
