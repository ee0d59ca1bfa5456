import { createServer, Socket } from 'node:net';

/** A loopback port nothing listens on right now (taken, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/**
 * Pipes an accepted connection to `host:port` both ways, tracking both
 * sockets in `sockets` (so a test can cut them all) and ignoring their
 * errors (a cut is the point of these proxies).
 */
export function pipeToUpstream(client: Socket, target: string, sockets: Set<Socket>): void {
  const [host, port] = target.split(':') as [string, string];
  const upstream = new Socket();
  upstream.connect(Number(port), host);
  for (const s of [client, upstream]) {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  }
  client.pipe(upstream);
  upstream.pipe(client);
}
