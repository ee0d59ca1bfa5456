import { withTestEncryption } from './test-encryption';

// Every test file runs with payload encryption on, as the issue asks: workers,
// clients and child processes all read their keys from this environment.
// PAYLOAD_ENCRYPTION_KEYS='' in the environment runs the suite plain.
Object.assign(process.env, withTestEncryption(process.env));
