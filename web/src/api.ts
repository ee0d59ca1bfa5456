/**
 * Problem details (RFC 9457) as the API sends them, or as the console makes
 * them for a failure that never reached the API (the network, say).
 */
export interface Problem {
  status: number;
  title: string;
  detail: string;
  failureType: string;
  errors?: Array<{ path: string; message: string }>;
  currentVersion?: number;
  retryAfterSeconds?: number;
  earliestOffset?: number;
}

/** A request to the API that did not succeed. */
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.title}: ${problem.detail}`);
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Reads a problem from a failed response, whatever its body holds. */
export async function problemOf(res: Response): Promise<Problem> {
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(await res.text());
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's error page): the status says enough.
  }
  const errors = Array.isArray(body.errors)
    ? body.errors.flatMap((e: unknown) => {
        const o = (e ?? {}) as Record<string, unknown>;
        const path = str(o.path);
        const message = str(o.message);
        return path !== undefined && message !== undefined ? [{ path, message }] : [];
      })
    : undefined;
  const problem: Problem = {
    status: num(body.status) ?? res.status,
    title: str(body.title) ?? (res.statusText || `HTTP ${res.status}`),
    detail: str(body.detail) ?? 'The server gave no details.',
    failureType: str(body.failureType) ?? `Http${res.status}`,
  };
  if (errors?.length) problem.errors = errors;
  const currentVersion = num(body.currentVersion);
  if (currentVersion !== undefined) problem.currentVersion = currentVersion;
  const retryAfterSeconds = num(body.retryAfterSeconds);
  if (retryAfterSeconds !== undefined) problem.retryAfterSeconds = retryAfterSeconds;
  const earliestOffset = num(body.earliestOffset);
  if (earliestOffset !== undefined) problem.earliestOffset = earliestOffset;
  return problem;
}

export const networkProblem = (err: unknown): Problem => ({
  status: 0,
  title: 'Cannot reach the server',
  detail: `The request did not get an answer (${err instanceof Error ? err.message : 'network error'}). Check that the API server is running.`,
  failureType: 'NetworkError',
});

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * The API as the signed-in person: their bearer token on every request, JSON
 * in and out, problem details turned into ApiError. A 401 means the token is
 * no longer good: `onUnauthorized` signs the person out.
 */
export class Api {
  constructor(
    private readonly token: string,
    private readonly onUnauthorized: (problem: Problem) => void,
  ) {}

  /** Headers for a request of our own (the event stream reads with fetch too). */
  authHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.token}` };
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.authHeaders(), ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(path, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (err) {
      if (options.signal?.aborted) throw err;
      throw new ApiError(networkProblem(err));
    }
    if (!res.ok) {
      const problem = await problemOf(res);
      if (res.status === 401) this.onUnauthorized(problem);
      throw new ApiError(problem);
    }
    // 204 and some 202s have no body.
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', path, signal ? { signal } : {});
  }

  post<T>(path: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
    return this.request<T>('POST', path, { ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) });
  }
}

/** Path segments are escaped: ids come from the URL the person typed. */
export const seg = (value: string): string => encodeURIComponent(value);

/** Turns anything thrown by a call into a problem to show. */
export const asProblem = (err: unknown): Problem =>
  err instanceof ApiError ? err.problem : { status: 0, title: 'Something went wrong', detail: err instanceof Error ? err.message : String(err), failureType: 'ClientError' };
