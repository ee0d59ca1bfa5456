import { MongoClient } from 'mongodb';

/**
 * A MongoDB URI taken apart for messages and for redaction. The driver is
 * the judge of what it can use; this reads only the parts around it: where
 * the user name and password end (the last `@` before the hosts), the hosts,
 * and the options, whose values may be secret too
 * (`tlsCertificateKeyFilePassword`, `authMechanismProperties` with a session
 * token).
 */
interface MongoUriParts {
  scheme: string;
  user: string;
  /** As written (percent-encoded), or undefined without one. */
  password: string | undefined;
  hosts: string;
  /** The path and query, as written. */
  rest: string;
}

const SCHEME = /^mongodb(?:\+srv)?:\/\//;

/** Options whose values say where and how to connect, never who: shown as they are. Every other value is masked. */
const PLAIN_OPTIONS = new Set(
  [
    'replicaSet', 'authSource', 'authMechanism', 'tls', 'ssl', 'directConnection', 'retryWrites', 'retryReads', 'w', 'journal', 'readPreference',
    'readConcernLevel', 'appName', 'compressors', 'connectTimeoutMS', 'socketTimeoutMS', 'serverSelectionTimeoutMS', 'maxPoolSize', 'minPoolSize',
    'loadBalanced', 'srvMaxHosts', 'srvServiceName', 'tlsInsecure', 'tlsAllowInvalidCertificates', 'tlsAllowInvalidHostnames', 'tlsCAFile',
    'tlsCertificateKeyFile', 'heartbeatFrequencyMS', 'localThresholdMS', 'maxIdleTimeMS', 'waitQueueTimeoutMS', 'zlibCompressionLevel',
  ].map((o) => o.toLowerCase()),
);

function partsOf(uri: string): MongoUriParts | undefined {
  const scheme = SCHEME.exec(uri)?.[0];
  if (!scheme) return undefined;
  const afterScheme = uri.slice(scheme.length);
  const end = afterScheme.search(/[/?]/);
  const authority = end === -1 ? afterScheme : afterScheme.slice(0, end);
  const rest = end === -1 ? '' : afterScheme.slice(end);
  const at = authority.lastIndexOf('@');
  if (at === -1) return { scheme, user: '', password: undefined, hosts: authority, rest };
  const userinfo = authority.slice(0, at);
  const colon = userinfo.indexOf(':');
  return { scheme, user: colon === -1 ? userinfo : userinfo.slice(0, colon), password: colon === -1 ? undefined : userinfo.slice(colon + 1), hosts: authority.slice(at + 1), rest };
}

function optionsOf(rest: string): Array<[string, string]> {
  const query = rest.indexOf('?');
  if (query === -1) return [];
  return rest
    .slice(query + 1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq === -1 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    });
}

/**
 * Why the driver cannot use `uri`, or undefined when it can; never quotes
 * the credentials. A password with an unescaped `@` is refused here too: the
 * driver takes the first `@` as the end of the password and the rest of the
 * password as the host, so the connection fails later naming that host, a
 * piece of the password.
 */
export function mongoUriProblem(uri: string): string | undefined {
  const parts = partsOf(uri);
  if (!parts) return 'must start with mongodb:// or mongodb+srv://';
  const credentials = parts.password === undefined ? parts.user : `${parts.user}:${parts.password}`;
  if (credentials.includes('@')) return 'has an unescaped "@" in its user name or password: percent-encode it as %40';
  try {
    // Parses only; nothing connects until connect().
    void new MongoClient(uri);
    return undefined;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const quoted = [uri, credentials, parts.password].filter((s): s is string => typeof s === 'string' && s.length >= 3);
    const safe = quoted.reduce((text, secret) => text.split(secret).join('***'), message).slice(0, 300);
    return `is not a connection string the MongoDB driver can use (${safe}); percent-encode special characters in the user name and password (@ : / ? # [ ] %)`;
  }
}

/** Where a MongoDB URI points, for messages: scheme and hosts, without credentials, database or options. */
export function mongoAddress(uri: string): string {
  const parts = partsOf(uri);
  return parts ? `${parts.scheme}${parts.hosts}` : '(the configured MongoDB URI)';
}

/** The URI for printing: the password masked, and every option value but those that only say where and how to connect. */
export function maskMongoUri(uri: string): string {
  const parts = partsOf(uri);
  if (!parts) return '(the configured MongoDB URI)';
  const userinfo = parts.user === '' && parts.password === undefined ? '' : `${parts.user}${parts.password === undefined ? '' : ':***'}@`;
  const query = parts.rest.indexOf('?');
  const path = query === -1 ? parts.rest : parts.rest.slice(0, query);
  const options = optionsOf(parts.rest).map(([name, value]) => `${name}=${PLAIN_OPTIONS.has(name.toLowerCase()) ? value : '***'}`);
  return `${parts.scheme}${userinfo}${parts.hosts}${path}${options.length > 0 ? `?${options.join('&')}` : ''}`;
}

/** Options whose values are secrets. Other values are masked when the URI is printed, but not redacted: `5000` or `true` would go wherever they appear. */
const SECRET_OPTION = /password|secret|token|credential|authmechanismproperties/i;

/** The URI's secret values, as written and percent-decoded: the password, and the values of secret-bearing options. */
export function mongoUriSecrets(uri: string): string[] {
  const parts = partsOf(uri);
  if (!parts) return [];
  const raw = [parts.password, ...optionsOf(parts.rest).filter(([name]) => SECRET_OPTION.test(name)).map(([, value]) => value)];
  const out: string[] = [];
  for (const value of raw) {
    if (!value) continue;
    out.push(value);
    try {
      const decoded = decodeURIComponent(value);
      if (decoded !== value) out.push(decoded);
    } catch {
      // A malformed escape: the raw form is all a driver can echo.
    }
    // authMechanismProperties=AWS_SESSION_TOKEN:<token>,...: each value on its own too.
    for (const piece of value.split(/[,:]/)) if (piece.length >= 8 && piece !== value) out.push(piece);
  }
  return out;
}
