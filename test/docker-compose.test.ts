import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { SESSION_SEARCH_ATTRIBUTES } from '../scripts/stack/search-attributes';

interface PublishedPort {
  hostIp: string | null;
  published: number;
  target: number;
}

interface ComposeService {
  image?: string;
  command?: string | string[];
  ports?: unknown[];
}

const compose = parse(fs.readFileSync(path.join(process.cwd(), 'docker-compose.yml'), 'utf8')) as {
  services?: Record<string, ComposeService>;
};
const services = compose.services ?? {};

/** Both compose port syntaxes: "[ip:]published:target[/proto]" and { host_ip, published, target }. */
function publishedPorts(service: ComposeService | undefined): PublishedPort[] {
  return (service?.ports ?? []).map((entry) => {
    if (typeof entry === 'string' || typeof entry === 'number') {
      const parts = String(entry).replace(/\/(tcp|udp)$/, '').split(':');
      const target = Number(parts.pop());
      const published = Number(parts.pop() ?? target);
      return { hostIp: parts.length > 0 ? parts.join(':') : null, published, target };
    }
    const long = entry as { host_ip?: string; published?: string | number; target: number };
    return { hostIp: long.host_ip ?? null, published: Number(long.published ?? long.target), target: Number(long.target) };
  });
}

function commandOf(service: ComposeService | undefined): string[] {
  const command = service?.command ?? [];
  return Array.isArray(command) ? command.map(String) : command.split(/\s+/);
}

describe('docker-compose.yml', () => {
  it('runs a Temporal dev server and MongoDB 7', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['temporal', 'mongo']));
    expect(services.temporal?.image).toMatch(/^temporalio\/temporal(:|$)/);
    expect(commandOf(services.temporal).slice(0, 2)).toEqual(['server', 'start-dev']);
    expect(services.mongo?.image).toMatch(/^mongo:7(\.|$)/);
  });

  it('publishes the same ports as the local stack, on loopback only', () => {
    const expectations: Array<[string, number]> = [
      ['temporal', 7233],
      ['temporal', 8233],
      ['mongo', 27017],
    ];
    for (const [name, port] of expectations) {
      expect(publishedPorts(services[name])).toContainEqual({ hostIp: '127.0.0.1', published: port, target: port });
    }
  });

  it('makes the dev server listen beyond the container loopback, or published ports would not reach it', () => {
    const command = commandOf(services.temporal);
    expect(command[command.indexOf('--ip') + 1]).toBe('0.0.0.0');
  });

  it('registers the session search attributes the local stack registers', () => {
    const command = commandOf(services.temporal);
    const registered = command.flatMap((arg, index) => (arg === '--search-attribute' ? [command[index + 1]] : []));
    const expected = Object.entries(SESSION_SEARCH_ATTRIBUTES).map(([name, type]) => `${name}=${type}`);
    expect(registered.sort()).toEqual(expected.sort());
  });
});
