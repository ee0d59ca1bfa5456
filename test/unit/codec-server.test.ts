import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from '../../codec/aes-gcm-codec';
import { startCodecServer } from '../../codec/codec-server';

const UI = 'http://127.0.0.1:8233';
const TOKEN = 'codec-test-token-0123456789';
const codec = new AesGcmPayloadCodec({ currentKeyId: 'k1', keys: new Map([['k1', randomBytes(32)]]) });
let server: Awaited<ReturnType<typeof startCodecServer>>;

beforeAll(async () => {
  server = await startCodecServer({ codec, token: TOKEN, allowedOrigins: [UI], namespaces: ['default'] });
});
afterAll(async () => {
  await server?.close();
});

const b64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');
async function encryptedJson(value: unknown) {
  const [p] = await codec.encode([defaultPayloadConverter.toPayload(value)]);
  return { metadata: Object.fromEntries(Object.entries(p!.metadata!).map(([k, v]) => [k, b64(v)])), data: b64(p!.data) };
}
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', Origin: UI, ...headers },
    body: JSON.stringify(body),
  });

describe('the Web UI codec server', () => {
  it('decodes an encrypted payload for a caller with the bearer token', async () => {
    const res = await post('/decode', { payloads: [await encryptedJson({ text: 'hello from the session' })] }, { Authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI);
    const body = (await res.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> };
    expect(Buffer.from(body.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
    expect(JSON.parse(Buffer.from(body.payloads[0]!.data, 'base64').toString())).toEqual({ text: 'hello from the session' });
  });

  it('encodes, and decodes what it encoded; plain payloads pass through', async () => {
    const plain = { metadata: { encoding: b64(Buffer.from('json/plain')) }, data: b64(Buffer.from('"plain"')) };
    const encoded = (await (await post('/encode', { payloads: [plain] }, { Authorization: `Bearer ${TOKEN}` })).json()) as { payloads: unknown[] };
    expect(Buffer.from((encoded.payloads[0] as { metadata: Record<string, string> }).metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
    const decoded = (await (await post('/decode', { payloads: [...encoded.payloads, plain] }, { Authorization: `Bearer ${TOKEN}` })).json()) as { payloads: unknown[] };
    expect(decoded.payloads).toEqual([plain, plain]);
  });

  it('refuses a call without the token, or with a wrong one, with 401', async () => {
    const payloads = [await encryptedJson('secret text')];
    const attempts: Array<Record<string, string>> = [{}, { Authorization: 'Bearer wrong-token' }, { Authorization: TOKEN }];
    for (const headers of attempts) {
      const res = await post('/decode', { payloads }, headers);
      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain('secret text');
    }
  });

  it('answers a path that is not valid percent-encoding, or any other malformed request line, and stays up', async () => {
    const { request } = await import('node:http');
    const { port } = new URL(server.url);
    const raw = (path: string) =>
      new Promise<number>((resolve, reject) => {
        // node:http sends the path as written (fetch would normalize it first).
        request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on('error', reject)
          .end('{"payloads":[]}');
      });
    expect(await raw('/%/decode')).toBe(401);
    expect(await raw('/%zz/decode')).toBe(401);
    expect(await raw(`/%E0%A4%A/decode`)).toBe(401);
    // A path the URL parser refuses (`//` starts an authority) is the catch-all's: 400.
    expect(await raw('//%/x/decode')).toBe(400);
    // Still serving.
    const res = await post('/decode', { payloads: [await encryptedJson('after')] }, { Authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
  });

  it('takes the token as the first path segment, for a UI without sign-in', async () => {
    const res = await post(`/${TOKEN}/decode`, { payloads: [await encryptedJson('via path')] });
    expect(res.status).toBe(200);
    expect((await post('/not-the-token/decode', { payloads: [] })).status).toBe(401);
  });

  it('answers the UI origin\'s preflight with Authorization and X-Namespace allowed, and no other origin', async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/decode`, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type,x-namespace' },
      });
    const ok = await preflight(UI);
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(UI);
    expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
    expect(ok.headers.get('access-control-allow-headers')?.toLowerCase().split(/,\s*/)).toEqual(expect.arrayContaining(['authorization', 'x-namespace', 'content-type']));
    const other = await preflight('https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses another namespace, a malformed body and a tampered payload with clear errors', async () => {
    const auth = { Authorization: `Bearer ${TOKEN}` };
    expect((await post('/decode', { payloads: [] }, { ...auth, 'X-Namespace': 'other' })).status).toBe(403);
    const bad = await post('/decode', { nope: 1 }, auth);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/payloads/);
    const tampered = await encryptedJson('x');
    tampered.data = b64(Buffer.from(tampered.data, 'base64').map((b, i) => (i === 20 ? b ^ 1 : b)));
    const res = await post('/decode', { payloads: [tampered] }, auth);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/failed authentication with key id "k1"/);
  });
});
