/**
 * The payload encryption key tests use by default (fixed, so a failed test's
 * history can still be read with it). Tests run with encryption on; a test
 * or the environment can set PAYLOAD_ENCRYPTION_KEYS to other keys, or to ''
 * to run plain.
 */
export const TEST_ENCRYPTION_KEYS = 'test-2026:dGVzdC1vbmx5LXBheWxvYWQta2V5LTMyLWJ5dGVzISE=';

/** The environment with the test key added unless it already says something about encryption. */
export function withTestEncryption(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return env.PAYLOAD_ENCRYPTION_KEYS === undefined ? { ...env, PAYLOAD_ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS } : env;
}
