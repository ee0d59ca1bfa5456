import { readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc/<pid>/stat on Linux (USER_HZ). */
const TICKS_PER_S = 100;

/** CPU time a process has used (user + system), in ms; undefined once it is gone. */
export async function cpuMs(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
  } catch {
    return undefined;
  }
}

/** CPU time used by named processes between `start` and `stop`, in ms; a process that died meanwhile counts up to its last reading. */
export class CpuMeter {
  private readonly before = new Map<string, number>();
  private readonly last = new Map<string, number>();

  constructor(private readonly pids: ReadonlyMap<string, number>) {}

  async start(): Promise<void> {
    for (const [name, pid] of this.pids) {
      const ms = await cpuMs(pid);
      if (ms === undefined) continue;
      this.before.set(name, ms);
      this.last.set(name, ms);
    }
  }

  /** Reads every process again; call it just before killing one, so its share is kept. */
  async read(): Promise<void> {
    for (const [name, pid] of this.pids) {
      const ms = await cpuMs(pid);
      if (ms !== undefined) this.last.set(name, ms);
    }
  }

  async used(): Promise<Map<string, number>> {
    await this.read();
    return new Map([...this.before].map(([name, ms]) => [name, (this.last.get(name) ?? ms) - ms]));
  }
}
