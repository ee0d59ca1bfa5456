/**
 * `${VAR}` and `${VAR:-default}` in MCP config values, read from the worker's
 * environment, so tokens stay out of the file. Every value that came from the
 * environment is remembered as a secret, to be redacted from messages.
 */

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export interface ExpansionProblem {
  /** Dotted path inside the server entry, e.g. `headers.Authorization`. */
  field: string;
  message: string;
}

export interface Expansion {
  value: unknown;
  /** Values read from the environment (and the strings they were expanded into). */
  secrets: string[];
  problems: ExpansionProblem[];
}

function expandString(text: string, env: Record<string, string | undefined>, field: string, out: Expansion): string {
  let used = false;
  const expanded = text.replace(REFERENCE, (whole, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') {
      used = true;
      out.secrets.push(value);
      return value;
    }
    if (fallback !== undefined) return fallback;
    out.problems.push({ field, message: `uses \${${name}}, which is not set in the worker's environment; set ${name} or write \${${name}:-default}` });
    return whole;
  });
  if (used) out.secrets.push(expanded);
  return expanded;
}

function walk(node: unknown, env: Record<string, string | undefined>, path: string[], out: Expansion): unknown {
  if (typeof node === 'string') return expandString(node, env, path.join('.') || '(value)', out);
  if (Array.isArray(node)) return node.map((item, i) => walk(item, env, [...path, String(i)], out));
  if (typeof node === 'object' && node !== null) {
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value, env, [...path, key], out)]));
  }
  return node;
}

/** Expands every string inside `value` (keys are left alone). */
export function expandEnvReferences(value: unknown, env: Record<string, string | undefined>): Expansion {
  const out: Expansion = { value: undefined, secrets: [], problems: [] };
  out.value = walk(value, env, [], out);
  out.secrets = [...new Set(out.secrets.filter((s) => s.length >= 4))];
  return out;
}
