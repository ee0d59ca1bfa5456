/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testTimeout: 60_000,
  // Each file gets its own task queue; the worker SIGKILL test needs serial runs to stay honest on 2 cores.
  maxWorkers: 1,
};
