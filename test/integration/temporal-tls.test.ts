import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { AgentClient, TemporalUnreachableError } from '../../client';
import { dataConverterFor } from '../../codec/data-converter';
import { temporalTransportOptions } from '../../workers/temporal-connection-options';
import { pipeToUpstream } from '../support/net';
import { sessionOptions, startTestEnv, uniqueId, type TestEnv } from '../support/test-env';

/*
 * The worker and the typed client reach Temporal over mTLS with the settings
 * a real cluster needs (server name, CA, client certificate and key). The dev
 * server speaks plain TCP, so a TLS terminator in front of it plays the
 * cluster's TLS endpoint: it presents a certificate for "temporal.test"
 * signed by a CA made for this test, and refuses clients without a
 * certificate from that CA.
 */

const SERVER_NAME = 'temporal.test';

interface Pki {
  dir: string;
  caPath: string;
  certPath: string;
  keyPath: string;
  serverCert: Buffer;
  serverKey: Buffer;
  ca: Buffer;
}

function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'tls-test-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=durable-agent test CA');
  const leaf = (name: string, cn: string, ext: string) => {
    writeFileSync(join(dir, `${name}.ext`), ext);
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`);
  };
  leaf('server', SERVER_NAME, `subjectAltName=DNS:${SERVER_NAME}\nextendedKeyUsage=serverAuth\n`);
  leaf('client', 'worker', 'extendedKeyUsage=clientAuth\n');
  const read = (f: string) => readFileSync(join(dir, f));
  return {
    dir,
    caPath: join(dir, 'ca.pem'),
    certPath: join(dir, 'client.pem'),
    keyPath: join(dir, 'client.key'),
    serverCert: read('server.pem'),
    serverKey: read('server.key'),
    ca: read('ca.pem'),
  };
}

/** Terminates mTLS (HTTP/2 by ALPN, as gRPC wants) and forwards the bytes to the plain dev server. */
async function startTlsTerminator(pki: Pki, target: string): Promise<{ server: Server; address: string; handshakes: { ok: number; refused: number } }> {
  const handshakes = { ok: 0, refused: 0 };
  const sockets = new Set<Socket>();
  const server = createServer({ key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: true, ALPNProtocols: ['h2'] }, (client: TLSSocket) => {
    handshakes.ok++;
    pipeToUpstream(client, target, sockets);
  });
  server.on('tlsClientError', () => handshakes.refused++);
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, address: `127.0.0.1:${(server.address() as AddressInfo).port}`, handshakes };
}

let pki: Pki;
let terminator: Awaited<ReturnType<typeof startTlsTerminator>>;
let env: TestEnv;
const agents: AgentClient[] = [];

beforeAll(async () => {
  pki = makePki();
  terminator = await startTlsTerminator(pki, process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233');
  env = await startTestEnv({
    name: 'tls',
    configEnv: {
      TEMPORAL_ADDRESS: terminator.address,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      TEMPORAL_TLS_CA_PATH: pki.caPath,
      TEMPORAL_TLS_CERT_PATH: pki.certPath,
      TEMPORAL_TLS_KEY_PATH: pki.keyPath,
    },
  });
}, 60_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.client.connection.close().catch(() => undefined)));
  await env?.close();
  terminator?.server.close();
  if (pki) rmSync(pki.dir, { recursive: true, force: true });
});

describe('Temporal over mTLS (server name, CA, client certificate)', () => {
  it('a worker and the typed client configured from the same settings run a turn through the TLS endpoint', async () => {
    expect(env.config.temporal.address).toBe(terminator.address);
    const before = terminator.handshakes.ok;
    const agent = await AgentClient.connect({
      address: env.config.temporal.address,
      namespace: env.config.temporal.namespace,
      taskQueue: env.taskQueue,
      dataConverter: dataConverterFor(env.config.encryption),
      ...temporalTransportOptions(env.config.temporal),
      principal: { tenant: 'acme', user: 'ana' },
    });
    agents.push(agent);
    const sessionId = uniqueId('tls');
    env.model.script([{ respond: { kind: 'text', text: 'Hello over TLS.' } }], { lane: sessionId });
    const { turnId } = await agent.send(sessionOptions(sessionId), { text: 'hi' });
    expect(await agent.waitForTurn(sessionId, turnId)).toMatchObject({ outcome: 'completed', text: 'Hello over TLS.' });
    // The worker's connection was made in beforeAll; this client made at least one more.
    expect(terminator.handshakes.ok).toBeGreaterThan(before);
    expect(terminator.handshakes.ok).toBeGreaterThanOrEqual(2);
  });

  it('a client without the client certificate is refused, and says the server is unreachable at that address', async () => {
    const refusedBefore = terminator.handshakes.refused;
    const attempt = AgentClient.connect({
      address: terminator.address,
      taskQueue: env.taskQueue,
      connectTimeoutMs: 3_000,
      tls: { serverNameOverride: SERVER_NAME, serverRootCACertificate: pki.ca },
    });
    await expect(attempt).rejects.toBeInstanceOf(TemporalUnreachableError);
    await expect(attempt).rejects.toThrow(`Temporal server at ${terminator.address} is unreachable`);
    expect(terminator.handshakes.refused).toBeGreaterThan(refusedBefore);
  });

  it('an API key implies TLS and never appears in the error when the connection fails', async () => {
    const apiKey = `tk-${uniqueId('secret')}`;
    const refusedBefore = terminator.handshakes.refused;
    // No tls option: the API key alone turns TLS on (the system CAs do not trust this test CA, so the handshake fails).
    const attempt = AgentClient.connect({ address: terminator.address, taskQueue: env.taskQueue, connectTimeoutMs: 3_000, apiKey });
    const error = await attempt.then(
      () => null,
      (err: unknown) => err as Error,
    );
    expect(error).toBeInstanceOf(TemporalUnreachableError);
    expect(error?.message).not.toContain(apiKey);
    expect(JSON.stringify(error)).not.toContain(apiKey);
    // It spoke TLS (a handshake the terminator saw and refused), not plain HTTP/2.
    expect(terminator.handshakes.refused).toBeGreaterThan(refusedBefore);
  });

  it('a client without TLS settings cannot talk to the TLS endpoint', async () => {
    const attempt = AgentClient.connect({ address: terminator.address, taskQueue: env.taskQueue, connectTimeoutMs: 3_000 });
    await expect(attempt).rejects.toBeInstanceOf(TemporalUnreachableError);
  });
});
