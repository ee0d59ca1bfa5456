/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/support/node-environment.js',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  // Payload encryption is on in every test process (PAYLOAD_ENCRYPTION_KEYS='' turns it off).
  setupFiles: ['<rootDir>/test/support/encryption-on.ts'],
  testTimeout: 60_000,
  // Each file gets its own task queue; the worker SIGKILL test needs serial runs to stay honest on 2 cores.
  maxWorkers: 1,
  // The Temporal SDK's native runtime, and connections some tests keep open on purpose (a cut
  // proxy's gRPC retry timers would throw into the process if closed under them), can hold the
  // process after the last suite; every suite closes what it owns, so the run is over then.
  forceExit: true,
};
