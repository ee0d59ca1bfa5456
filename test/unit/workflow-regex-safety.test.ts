import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkSync } from 'recheck';
import ts from 'typescript';

/*
 * Workflow code runs each task under the SDK's 5 s limit, and a task that
 * passes it is retried for ever: one slow regular expression over a user's
 * message, a model's answer or a tool's schema freezes the session for good
 * (a key-fact pattern took 20 s on "my task" and 4,000 blanks). recheck
 * (a ReDoS checker that builds the expression's automaton, then searches
 * for an attack string) checks every expression written as a literal in
 * workflows/. Expressions built with `new RegExp` are not seen here; those
 * in workflows/ have tests of their own (key-facts, memory-citations).
 */

const ROOT = join(__dirname, '../..');
const WORKFLOWS = join(ROOT, 'workflows');

/** Polynomial ones that stay, each with why its input cannot be long in the way that hurts. */
const KNOWN: Record<string, string> = {
  'workflows/memory-citations.ts /\\s*[,;]\\s*(?:mem:\\s*)?/i': 'splits the ids of one citation group that GROUP matched: its blanks only ever stand next to a separator',
  'workflows/memory-citations.ts /\\s*[,;\\uff0c\\u3001]\\s*(?:mem\\s*[:\\uff1a]\\s*)?/i': 'splits the ids of one citation group that WIDE_GROUP matched, as above',
};

function literals(): Array<{ where: string; key: string; source: string; flags: string }> {
  const out: Array<{ where: string; key: string; source: string; flags: string }> = [];
  const files = (readdirSync(WORKFLOWS, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
  for (const file of files) {
    const path = join(WORKFLOWS, file);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const text = node.getText(source);
        const slash = text.lastIndexOf('/');
        const name = relative(ROOT, path);
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        out.push({ where: `${name}:${line}`, key: `${name} ${text}`, source: text.slice(1, slash), flags: text.slice(slash + 1) });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

describe('regular expressions in workflow code', () => {
  it('none is found to take more than linear time on some input (recheck), but those listed with why', () => {
    const found = literals();
    expect(found.length).toBeGreaterThan(40);
    const unsafe = found.flatMap(({ where, key, source, flags }) => {
      // g and y change where a match starts, not how long one takes.
      // The fuzzer searches longer than by default: with its defaults it called the cubic key-fact pattern safe.
      const result = checkSync(source, flags.replace(/[gy]/g, ''), { timeout: 5_000, seeder: 'dynamic', maxIteration: 100, maxInitialGenerationSize: 1_000, incubationLimit: 200_000 });
      // 'unknown' is a search that ran out of time (it varies with the machine's load), not an attack found.
      if (result.status !== 'vulnerable' || KNOWN[key]) return [];
      return [`${where} ${key.split(' ').slice(1).join(' ')} (${result.complexity.type}: ${result.attack.pattern.slice(0, 80)})`];
    });
    expect(unsafe).toEqual([]);
    // Each listed one is still there: a list of what no longer exists hides nothing, but says what is not so.
    for (const key of Object.keys(KNOWN)) expect(found.map((f) => f.key)).toContain(key);
  }, 120_000);
});
