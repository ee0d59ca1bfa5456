import type { z } from 'zod';

export interface InvalidBody {
  /** Every issue, each prefixed with the field it concerns. */
  message: string;
  /** The first bad field, in the `messages[2].role` form, for OpenAI's `error.param`. */
  param: string | null;
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((out, key) => {
    if (typeof key === 'number') return `${out}[${key}]`;
    const name = String(key);
    return out === '' ? name : `${out}.${name}`;
  }, '');
}

/** `field: problem; field: problem`, naming `(root)` for issues about the value itself. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${formatPath(issue.path) || '(root)'}: ${issue.message}`).join('; ');
}

export function describeInvalidBody(error: z.ZodError): InvalidBody {
  const first = error.issues[0];
  return {
    message: `Invalid request body: ${describeIssues(error)}`,
    param: first === undefined ? null : formatPath(first.path) || null,
  };
}
