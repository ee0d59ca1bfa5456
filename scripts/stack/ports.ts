import net from 'node:net';
import { PortInUseError, StackConfigError } from './errors';
import { describePortOwner } from './port-owner';

/** Every server the stack starts binds here and only here. */
export const LOOPBACK = '127.0.0.1';

export interface HostPort {
  host: string;
  port: number;
}

/** Reads a port override such as TEMPORAL_PORT, rejecting anything that is not 1..65535. */
export function portFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new StackConfigError(`${name}=${raw} is not a TCP port (expected an integer from 1 to 65535)`);
  }
  return port;
}

/** Parses `host:port` (and `[v6]:port`) as given in TEMPORAL_ADDRESS. */
export function parseHostPort(address: string, envName: string): HostPort {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(address.trim());
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!match || !host || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new StackConfigError(`${envName}=${address} is not host:port (for example 127.0.0.1:7233)`);
  }
  return { host, port };
}

/** True when something accepts a TCP connection at host:port within the timeout. */
export function canConnect(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const finish = (ok: boolean): void => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/**
 * Tries to bind the port. A bind test also catches a listener that is too
 * busy to accept, which a connect test would miss and then fail later with a
 * less clear error from the server we start.
 */
export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(false);
      else reject(error);
    });
    server.listen({ host, port, exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}

/**
 * Fails with the message the issue asks for when a port is taken by a process
 * that the state file does not say we started. `settings` names the variables
 * that move us elsewhere, e.g. "TEMPORAL_PORT / TEMPORAL_ADDRESS".
 */
export async function assertPortFree(port: number, settings: string): Promise<void> {
  if (await isPortFree(LOOPBACK, port)) return;
  const owner = describePortOwner(port);
  const held = owner ? ` It is held by ${owner}.` : '';
  throw new PortInUseError(
    port,
    `port ${port} is in use by another process (not started by durable-agent); stop it or set ${settings}.${held}`,
  );
}
