import { configuredSecrets, describeConfig, loadConfig } from '../../workers/config';
import { temporalTransportOptions } from '../../workers/temporal-connection-options';

const base = { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' };
const files: Record<string, string> = { '/ca.pem': 'CA-PEM', '/client.pem': 'CERT-PEM', '/client.key': 'KEY-PEM' };
const read = (path: string) => {
  if (!(path in files)) throw new Error('ENOENT');
  return Buffer.from(files[path]!);
};

describe('TLS, mTLS and API key for the Temporal connection', () => {
  it('connects in plain TCP by default, as the local dev server wants', () => {
    expect(temporalTransportOptions(loadConfig(base).temporal, read)).toEqual({});
  });

  it('passes server name, CA and client certificate pair into the connection options', () => {
    const config = loadConfig({
      ...base,
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      TEMPORAL_TLS_CA_PATH: '/ca.pem',
      TEMPORAL_TLS_CERT_PATH: '/client.pem',
      TEMPORAL_TLS_KEY_PATH: '/client.key',
    });
    expect(temporalTransportOptions(config.temporal, read)).toEqual({
      tls: {
        serverNameOverride: 'temporal.internal',
        serverRootCACertificate: Buffer.from('CA-PEM'),
        clientCertPair: { crt: Buffer.from('CERT-PEM'), key: Buffer.from('KEY-PEM') },
      },
    });
  });

  it('turns TLS on for an API key, and keeps the key secret', () => {
    const config = loadConfig({ ...base, TEMPORAL_API_KEY: 'tmprl-api-key-123456' });
    expect(temporalTransportOptions(config.temporal, read)).toEqual({ tls: {}, apiKey: 'tmprl-api-key-123456' });
    expect(configuredSecrets(config)).toContain('tmprl-api-key-123456');
    expect(JSON.stringify(describeConfig(config))).not.toContain('tmprl-api-key-123456');
  });

  it('refuses half an mTLS pair and names an unreadable file by its variable', () => {
    expect(() => loadConfig({ ...base, TEMPORAL_TLS_CERT_PATH: '/client.pem' })).toThrow(/temporal\.tlsCertPath .*set both TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH/);
    const config = loadConfig({ ...base, TEMPORAL_TLS_CA_PATH: '/missing.pem' });
    expect(() => temporalTransportOptions(config.temporal, read)).toThrow(/TEMPORAL_TLS_CA_PATH=\/missing\.pem cannot be read/);
  });
});
