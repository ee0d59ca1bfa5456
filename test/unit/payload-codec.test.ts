import { randomBytes } from 'node:crypto';
import { ApplicationFailure, defaultPayloadConverter, type Payload } from '@temporalio/common';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING, METADATA_KEY_ID, PayloadDecryptionFailed, dataConverterFor } from '../../codec';
import { ConfigError, configuredSecrets, describeConfig, loadConfig } from '../../workers/config';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
const plain = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const codec = (currentKeyId: string, keys: Record<string, Buffer>) => new AesGcmPayloadCodec({ currentKeyId, keys: new Map(Object.entries(keys)) });

async function decodeError(c: AesGcmPayloadCodec, payload: Payload): Promise<ApplicationFailure> {
  try {
    await c.decode([payload]);
  } catch (err) {
    return err as ApplicationFailure;
  }
  throw new Error('decode did not fail');
}

describe('the AES-256-GCM payload codec', () => {
  it('round-trips a payload, metadata included, and hides its text', async () => {
    const c = codec('a', { a: keyA });
    const original = plain({ text: 'CanaryUserText-91x' });
    const [encrypted] = await c.encode([original]);
    expect(text(encrypted!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(encrypted!.metadata![METADATA_KEY_ID])).toBe('a');
    expect(Buffer.from(encrypted!.data!).includes('CanaryUserText')).toBe(false);
    expect(Buffer.from(encrypted!.data!).includes('json/plain')).toBe(false);
    const [decoded] = await c.decode([encrypted!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ text: 'CanaryUserText-91x' });
    expect(text(decoded!.metadata!.encoding)).toBe('json/plain');
  });

  it('encrypts the same payload differently each time (fresh IV)', async () => {
    const c = codec('a', { a: keyA });
    const [one, two] = await c.encode([plain('same'), plain('same')]);
    expect(Buffer.from(one!.data!).equals(Buffer.from(two!.data!))).toBe(false);
  });

  it('after rotation, encrypts with the new key and still decrypts what the old key wrote', async () => {
    const before = codec('a', { a: keyA });
    const after = codec('b', { a: keyA, b: keyB });
    const [old] = await before.encode([plain('written before rotation')]);
    const [fresh] = await after.encode([plain('written after rotation')]);
    expect(text(fresh!.metadata![METADATA_KEY_ID])).toBe('b');
    const decoded = await after.decode([old!, fresh!]);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual(['written before rotation', 'written after rotation']);
  });

  it('refuses a payload whose key id it does not know, naming the id', async () => {
    const [encrypted] = await codec('b', { b: keyB }).encode([plain('x')]);
    const err = await decodeError(codec('a', { a: keyA }), encrypted!);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err.type).toBe(PayloadDecryptionFailed);
    expect(err.message).toMatch(/key id "b", which is not among the configured keys \(a\)/);
    expect(err.nonRetryable).toBe(true);
  });

  it('detects a tampered payload (GCM authentication) with a clear error', async () => {
    const c = codec('a', { a: keyA });
    const [encrypted] = await c.encode([plain('do not alter me')]);
    const data = Buffer.from(encrypted!.data!);
    data[20] = data[20]! ^ 0x01;
    const err = await decodeError(c, { ...encrypted!, data });
    expect(err.type).toBe(PayloadDecryptionFailed);
    expect(err.message).toMatch(/failed authentication with key id "a": it was altered/);
    const truncated = await decodeError(c, { ...encrypted!, data: data.subarray(0, 10) });
    expect(truncated.message).toMatch(/too short/);
  });

  it('a key id that names a different key fails authentication rather than yielding garbage', async () => {
    const [encrypted] = await codec('a', { a: keyA }).encode([plain('x')]);
    const err = await decodeError(codec('a', { a: keyB }), encrypted!);
    expect(err.message).toMatch(/failed authentication/);
  });

  it('passes plain payloads through on decode, so the temporal CLI and old histories still read', async () => {
    const c = codec('a', { a: keyA });
    const raw: Payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"text":"from the CLI"}') };
    const binary: Payload = { metadata: { encoding: Buffer.from('binary/null') } };
    expect(await c.decode([raw, binary])).toEqual([raw, binary]);
  });

  it('is off without keys and on with them', () => {
    expect(dataConverterFor({}).payloadCodecs).toBeUndefined();
    expect(dataConverterFor({ keys: `k1:${keyA.toString('base64')}` }).payloadCodecs).toHaveLength(1);
  });
});

describe('encryption configuration', () => {
  const base = { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' };
  const a = keyA.toString('base64');
  const b = keyB.toString('base64');

  it('is off by default', () => {
    expect(loadConfig(base).encryption).toEqual({});
  });

  it('takes several keys and a current id; the key material is a secret', () => {
    const config = loadConfig({ ...base, PAYLOAD_ENCRYPTION_KEYS: `old:${a},new:${b}`, PAYLOAD_ENCRYPTION_KEY_ID: 'new' });
    expect(config.encryption.keyId).toBe('new');
    expect(configuredSecrets(config)).toEqual(expect.arrayContaining([a, b]));
    const printed = JSON.stringify(describeConfig(config));
    expect(printed).not.toContain(a);
    expect(printed).not.toContain(b);
  });

  it('names each bad entry without printing key material', () => {
    const short = Buffer.alloc(16, 7).toString('base64');
    let error: unknown;
    try {
      loadConfig({ ...base, PAYLOAD_ENCRYPTION_KEYS: `good:${a},bad:${short},nocolon,good:${b}`, PAYLOAD_ENCRYPTION_KEY_ID: 'x' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toMatch(/encryption\.keys \(PAYLOAD_ENCRYPTION_KEYS\): entry 2 \(key id "bad"\) decodes to 16 bytes, not 32/);
    expect(message).toMatch(/entry 3 is not id:base64key/);
    expect(message).toMatch(/entry 4 repeats key id "good"/);
    for (const secret of [a, b, short]) expect(message).not.toContain(secret);
  });

  it('refuses a current key id that is not configured', () => {
    expect(() => loadConfig({ ...base, PAYLOAD_ENCRYPTION_KEYS: `k1:${a}`, PAYLOAD_ENCRYPTION_KEY_ID: 'k2' })).toThrow(
      /encryption\.keyId \(PAYLOAD_ENCRYPTION_KEY_ID\): names key id "k2", which is not among PAYLOAD_ENCRYPTION_KEYS/,
    );
  });
});
