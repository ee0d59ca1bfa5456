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
  // Two files at a time: each file has its own task queue, session ids and MongoDB
  // database, and most of a file's time is spent waiting on timers and round trips, so on 2 cores
  // two at once took the suite from about 14.5 min (serial, 874 s) to 10.4 (624 s), all passing.
  maxWorkers: 2,
  // The Temporal SDK's native runtime, and connections some tests keep open on purpose (a cut
  // proxy's gRPC retry timers would throw into the process if closed under them), can hold the
  // process after the last suite; every suite closes what it owns, so the run is over then.
  forceExit: true,
};
