import { readFileSync } from 'node:fs';
import type { RuntimeConfig } from './config';

/** TLS, mTLS and API-key settings for reaching a Temporal cluster or Temporal Cloud. */
export interface TemporalTransportOptions {
  tls?: {
    serverNameOverride?: string;
    serverRootCACertificate?: Buffer;
    clientCertPair?: { crt: Buffer; key: Buffer };
  };
  apiKey?: string;
}

/**
 * The transport part of the connection options, from configuration: files are
 * read here (a missing file names its variable), so NativeConnection (worker)
 * and Connection (clients) get the same object. Without any setting, plain
 * TCP as the local dev server wants. An API key implies TLS, as Temporal Cloud requires.
 */
export function temporalTransportOptions(
  temporal: Pick<RuntimeConfig['temporal'], 'tls' | 'tlsServerName' | 'tlsCaPath' | 'tlsCertPath' | 'tlsKeyPath' | 'apiKey'>,
  read: (path: string) => Buffer = readFileSync,
): TemporalTransportOptions {
  const file = (path: string, variable: string) => {
    try {
      return read(path);
    } catch (err) {
      throw new Error(`${variable}=${path} cannot be read: ${(err as Error).message}`);
    }
  };
  const wantsTls = temporal.tls || temporal.tlsServerName || temporal.tlsCaPath || temporal.tlsCertPath || temporal.apiKey;
  const out: TemporalTransportOptions = {};
  if (wantsTls) {
    out.tls = {
      ...(temporal.tlsServerName ? { serverNameOverride: temporal.tlsServerName } : {}),
      ...(temporal.tlsCaPath ? { serverRootCACertificate: file(temporal.tlsCaPath, 'TEMPORAL_TLS_CA_PATH') } : {}),
      ...(temporal.tlsCertPath && temporal.tlsKeyPath
        ? { clientCertPair: { crt: file(temporal.tlsCertPath, 'TEMPORAL_TLS_CERT_PATH'), key: file(temporal.tlsKeyPath, 'TEMPORAL_TLS_KEY_PATH') } }
        : {}),
    };
  }
  if (temporal.apiKey) out.apiKey = temporal.apiKey;
  return out;
}
