import { stackTracesFromEnv, workflowBundlerOptions } from '../../workers/workflow-bundle';

describe('WORKFLOW_STACK_TRACES for scripts that bundle the workflows', () => {
  it('reads a flag as the config does, unset meaning off', () => {
    expect(stackTracesFromEnv({})).toBe(false);
    expect(['true', '1', 'YES', ' on '].map((v) => stackTracesFromEnv({ WORKFLOW_STACK_TRACES: v }))).toEqual([true, true, true, true]);
    expect(['false', '0', 'no', 'off', ''].map((v) => stackTracesFromEnv({ WORKFLOW_STACK_TRACES: v }))).toEqual([false, false, false, false, false]);
  });

  it('refuses anything else, naming the variable, rather than taking it as off', () => {
    expect(() => stackTracesFromEnv({ WORKFLOW_STACK_TRACES: 'ture' })).toThrow(/WORKFLOW_STACK_TRACES is "ture": set it to true or false/);
  });

  it('preloads the stack trace limit only when stack traces are off, and the shared libraries and built-once schemas always', () => {
    const shared = expect.stringMatching(/workflows[\\/]shared-libraries\.ts$/);
    const builtOnce = expect.stringMatching(/workflows[\\/]built-once\.ts$/);
    expect(workflowBundlerOptions(false).preloadModules).toEqual([expect.stringMatching(/workflows[\\/]stack-trace-limit\.ts$/), shared, builtOnce]);
    expect(workflowBundlerOptions(true).preloadModules).toEqual([shared, builtOnce]);
  });
});
