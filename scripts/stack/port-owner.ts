import fs from 'node:fs';
import { readCommandLine } from './processes';

const TCP_LISTEN = '0A';

/**
 * Best effort: names the process listening on a TCP port by matching the
 * socket inode in /proc/net/tcp{,6} against /proc/<pid>/fd. Returns null off
 * Linux or when the owner belongs to another user we cannot inspect.
 */
export function describePortOwner(port: number): string | null {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return null;
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return null;
  }
  for (const pid of pids) {
    if (!ownsSocket(pid, inodes)) continue;
    const argv = readCommandLine(Number(pid));
    const command = argv ? argv.join(' ') : 'unknown command';
    return `pid ${pid} (${command.length > 120 ? `${command.slice(0, 117)}...` : command})`;
  }
  return null;
}

function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // Columns: sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const columns = line.trim().split(/\s+/);
      const local = columns[1];
      const state = columns[3];
      const inode = columns[9];
      if (local?.endsWith(`:${portHex}`) && state === TCP_LISTEN && inode && inode !== '0') inodes.add(inode);
    }
  }
  return inodes;
}

function ownsSocket(pid: string, inodes: Set<string>): boolean {
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      const match = /^socket:\[(\d+)\]$/.exec(target);
      if (match?.[1] && inodes.has(match[1])) return true;
    } catch {
      // The fd closed while we looked; ignore it.
    }
  }
  return false;
}
