import { AesGcmPayloadCodec } from '../codec/aes-gcm-codec';
import { startCodecServer } from '../codec/codec-server';
import { keyListProblems, parseKeyList } from '../codec/encryption-keys';

/**
 * `npm run codec-server`: the Web UI's remote codec endpoint, so an operator
 * reads decrypted payloads in the UI. Needs the workers' PAYLOAD_ENCRYPTION_KEYS
 * and a CODEC_SERVER_TOKEN. Point the UI at it (`temporal server start-dev
 * --ui-codec-endpoint http://127.0.0.1:8234/<token>`, or the UI's codec
 * settings with "pass access token" on a UI with sign-in).
 */
function settings(env: NodeJS.ProcessEnv) {
  const problems: string[] = [];
  const keys = env.PAYLOAD_ENCRYPTION_KEYS?.trim();
  if (!keys) problems.push('PAYLOAD_ENCRYPTION_KEYS is not set: set it to the workers\' keys');
  else problems.push(...keyListProblems(keys).map((p) => `PAYLOAD_ENCRYPTION_KEYS: ${p}`));
  const token = env.CODEC_SERVER_TOKEN?.trim();
  if (!token || token.length < 16) problems.push('CODEC_SERVER_TOKEN must be set to a random string of at least 16 characters (openssl rand -hex 24)');
  const port = Number(env.CODEC_SERVER_PORT ?? '8234');
  if (!Number.isInteger(port) || port < 1 || port > 65_535) problems.push('CODEC_SERVER_PORT must be a port number, e.g. 8234');
  const origins = (env.CODEC_SERVER_ORIGINS ?? 'http://127.0.0.1:8233,http://localhost:8233').split(',').map((o) => o.trim()).filter(Boolean);
  if (problems.length > 0 || !keys || !token) throw new Error(`codec server: invalid settings:\n  - ${problems.join('\n  - ')}`);
  const parsed = parseKeyList(keys);
  const currentKeyId = env.PAYLOAD_ENCRYPTION_KEY_ID?.trim() || [...parsed.keys()][0]!;
  if (!parsed.has(currentKeyId)) throw new Error(`codec server: PAYLOAD_ENCRYPTION_KEY_ID names key id "${currentKeyId}", which is not among PAYLOAD_ENCRYPTION_KEYS`);
  const namespaces = env.CODEC_SERVER_NAMESPACES?.split(',').map((n) => n.trim()).filter(Boolean);
  return { codec: new AesGcmPayloadCodec({ currentKeyId, keys: parsed }), token, port, origins, namespaces, host: env.CODEC_SERVER_HOST?.trim() || '127.0.0.1' };
}

async function main(): Promise<void> {
  const s = settings(process.env);
  const server = await startCodecServer({ codec: s.codec, token: s.token, allowedOrigins: s.origins, namespaces: s.namespaces?.length ? s.namespaces : undefined, host: s.host, port: s.port });
  console.log(`codec server on ${server.url} (POST /encode, /decode; CORS for ${s.origins.join(', ')})`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(78);
});
