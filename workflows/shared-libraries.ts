import { z } from 'zod';

/*
 * Loaded once into the workflow sandbox before any session runs (the
 * bundler's `preloadModules`, workers/workflow-bundle.ts): zod, and every
 * module it imports, then stays in the sandbox's shared module cache, so a
 * new run (a session's start, a replay after the worker's cache let it go, a
 * continue-as-new) no longer evaluates zod's modules anew: a third to a
 * half of what a run spent evaluating the workflow modules
 * (docs/performance.md, "zod once per worker"). The session's own schemas
 * are not preloaded: zod completes a schema on first use, which a frozen
 * schema refuses. They are built once per sandbox all the same, out of the
 * freeze's reach (workflows/built-once.ts).
 *
 * Once the preload is done the SDK freezes what it loaded (module exports
 * and the globals they set), so zod's state that it fills in on first use
 * must be filled in here, or the first run to need it fails its workflow
 * task with "object is not extensible":
 *
 * - the default locale and memoizer (`globalThis.__zod_globalConfig`), set
 *   when the first schema is built;
 * - whether `new Function` works (`allowsEval`), read when the first
 *   object schema is built;
 * - the error formatting of each kind of issue the session's schemas raise.
 *
 * What cannot be filled in: zod's string formats that test a regular
 * expression kept in zod's module (email, ipv4, lowercase, date, and the
 * rest) reset its `lastIndex` before each test, which a frozen expression
 * refuses. The lint configuration (eslint.config.js) keeps them
 * out of workflows/; test/integration/shared-zod.test.ts runs the session
 * schemas' kinds of checks, passing and failing, inside the sandbox.
 *
 * Nothing in zod's shared state is per run or feeds a decision: its caches
 * are keyed by schema objects, which hold nothing of a run (most of the
 * session's are shared by every run too, workflows/built-once.ts); its
 * registry of schema ids (`.meta({ id })`) is written when a schema is built
 * and read only to write JSON Schema.
 */

function warmUp(): void {
  const probe = z.object({
    text: z.string().min(1).max(8).regex(/^a/),
    count: z.number().int().nonnegative().finite(),
    kind: z.enum(['a', 'b']),
    fixed: z.literal('x'),
    loose: z.looseObject({ note: z.string().optional() }).nullable().optional(),
    list: z.array(z.union([z.string(), z.number()])).max(3),
    pair: z.tuple([z.string(), z.number()]),
    map: z.record(z.string(), z.unknown()),
    tagged: z.discriminatedUnion('kind', [z.object({ kind: z.literal('a') }), z.object({ kind: z.literal('b'), on: z.boolean() })]),
    refined: z.string().refine((s) => s.length > 1, 'too short'),
    shaped: z.string().transform((s) => s.length),
    checked: z.number().superRefine((n, ctx) => {
      if (n > 1) ctx.addIssue({ code: 'custom', message: 'too big' });
    }),
    fallback: z.number().default(1),
  });
  const good = { text: 'ab', count: 1, kind: 'a', fixed: 'x', loose: null, list: ['x', 1], pair: ['a', 1], map: {}, tagged: { kind: 'b', on: true }, refined: 'ab', shaped: 'ab', checked: 1 };
  const bad = { text: '', count: -1.5, kind: 'c', fixed: 'y', loose: 3, list: [true, 1, 2, 3], pair: [1], map: 1, tagged: { kind: 'c' }, refined: 'a', shaped: 1, checked: 2, fallback: 'x', extra: 1 };
  for (const jitless of [false, true]) {
    probe.safeParse(good, { jitless });
    const refused = probe.safeParse(bad, { jitless });
    if (!refused.success) {
      z.prettifyError(refused.error);
      z.flattenError(refused.error);
    }
  }
  z.strictObject({ a: z.string() }).safeParse({ b: 1 });
}

warmUp();

/** Exported so the bundler keeps zod (whose package declares no side effects) in this module. */
export const sharedZod = z;
