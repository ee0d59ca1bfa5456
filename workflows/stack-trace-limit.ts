/**
 * Loaded once into the workflow sandbox before any session runs (the
 * bundler's `preloadModules`, see workers/workflow-bundle.ts), while the
 * sandbox's globals can still be changed.
 *
 * The Temporal TypeScript SDK records a stack trace for every promise
 * created in workflow code, to answer the `__stack_trace` query (the Web UI's
 * "Stack Trace" tab): it builds an Error and maps each of its frames through
 * the bundle's source map. At the default 10 frames that was a quarter to a
 * third of the CPU of replaying a session, and it is paid on every workflow
 * task (sdk-typescript issue #1587). With no frames captured the hook has
 * nothing to map. What is lost: the "Stack Trace" tab shows no frames, and
 * an error thrown inside workflow code carries its message but no stack.
 * `WORKFLOW_STACK_TRACES=true` leaves this module out and restores both.
 */
Error.stackTraceLimit = 0;

export {};
