/*
 * Schemas built once per workflow sandbox instead of once per run.
 *
 * The SDK evaluates the workflow bundle's modules again for every run it
 * creates (a session's start, a replay after the worker's cache let a run go,
 * a continue-as-new), so every run built the session's zod schemas anew:
 * about 7 ms of a new session's first workflow task, and each schema then
 * compiled its parser again on first use in that run (docs/performance.md,
 * "Schemas once per worker").
 *
 * This module is preloaded (the bundler's `preloadModules`,
 * workers/workflow-bundle.ts): the SDK evaluates it once per V8 context (one
 * per workflow thread of a worker; one per `runReplayHistories` call) and
 * shares it between the runs in that context. It then deep-freezes what the
 * module exports, and a frozen zod schema fails on first use (zod completes a
 * schema the first time it parses). The SDK freezes a function without
 * looking inside it, so what `builtOnce` keeps is out of the freeze's reach:
 * the schemas stay as zod needs them, and every run gets the same objects.
 *
 * Rules for what is built here:
 * - Values that hold no state of a run and feed no decision by being shared,
 *   which zod schemas are. Parsing allocates a new result and new issues each
 *   time, and what zod fills in on first use (a compiled parser, lazily
 *   computed shapes) is the same whichever run fills it in.
 * - A builder must not read the workflow's context (`workflowInfo()`, time,
 *   randomness): it runs once, in whichever run first needs it.
 * - Refinements and transforms are pure functions of the value. What they
 *   and the schemas use from outside the builder (`SESSION_ID_PATTERN`,
 *   `INPUT_LIMITS`, `Principal`, ...) is the first run's instance for the
 *   life of the context: it must never change, and nothing may compare it by
 *   identity with another run's. Those closures keep the first run's modules
 *   alive, a fixed amount per context.
 * - Defaults are copied shallowly on each parse: a default is a primitive, a
 *   flat value or a factory, never a nested object that a run could change.
 * - No preloaded module may import a module that uses `builtOnce`: its
 *   schemas would be frozen with the preload, and every run would fail.
 * - Each key is the building module's name, so no two builders share one.
 *
 * One risk that sharing adds: the SDK stops an activation that runs past its
 * deadlock timeout by terminating the script, which skips `catch` blocks. If
 * that ever lands inside zod's first computation of a lazy part of a shared
 * schema, zod's placeholder stays and that part reads as missing in every
 * later run on that thread until the worker restarts; before, it stayed with
 * the one run. The window is that computation (microseconds, once per schema
 * part), in an activation that has already run for the whole timeout.
 *
 * Where this module is not preloaded (a bundle made without the project's
 * bundler options, the SDK's non-reusable sandbox, plain Node) it is one
 * module among others: the map is per run, or per process, and each builder
 * runs as it did before.
 */

const built = new Map<string, object>();

/** The value `build` returns, built once for `key` in this sandbox (or process) and shared from then on. */
export function builtOnce<T extends object>(key: string, build: () => T): T {
  let value = built.get(key) as T | undefined;
  if (value === undefined) {
    value = build();
    built.set(key, value);
  }
  return value;
}
