import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ApplicationFailure, METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { EncryptionKeyring } from './encryption-keys';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_KEY_ID = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Failure type of a payload that cannot be decrypted (unknown key id, tampered or truncated data). */
export const PayloadDecryptionFailed = 'PayloadDecryptionFailed';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Encrypts every payload with AES-256-GCM under the keyring's current key.
 * The whole original payload (metadata and data) is serialized as a protobuf
 * `Payload` and sealed, so encodings and message names leak nothing either;
 * the outer payload carries only `encoding: binary/encrypted` and the key id.
 * Layout of the data: 12-byte IV, ciphertext, 16-byte GCM tag.
 *
 * Decoding passes through payloads that are not `binary/encrypted`: plain JSON
 * sent by the `temporal` CLI, and histories written before encryption was on,
 * still read.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  constructor(private readonly keyring: EncryptionKeyring) {
    if (!keyring.keys.has(keyring.currentKeyId)) throw new Error(`the current encryption key id "${keyring.currentKeyId}" is not among the configured keys`);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const keyId = this.keyring.currentKeyId;
    const key = this.keyring.keys.get(keyId) as Buffer;
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { [METADATA_ENCODING_KEY]: encoder.encode(ENCRYPTED_ENCODING), [METADATA_KEY_ID]: encoder.encode(keyId) },
        data: sealed,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
      if (!encoding || decoder.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
      const keyIdBytes = payload.metadata?.[METADATA_KEY_ID];
      if (!keyIdBytes) throw ApplicationFailure.nonRetryable(`An encrypted payload has no ${METADATA_KEY_ID} in its metadata`, PayloadDecryptionFailed);
      const keyId = decoder.decode(keyIdBytes);
      const key = this.keyring.keys.get(keyId);
      if (!key) {
        throw ApplicationFailure.nonRetryable(
          `A payload is encrypted with key id "${keyId}", which is not among the configured keys (${[...this.keyring.keys.keys()].join(', ')}); add it to PAYLOAD_ENCRYPTION_KEYS`,
          PayloadDecryptionFailed,
        );
      }
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < IV_BYTES + TAG_BYTES) throw ApplicationFailure.nonRetryable(`An encrypted payload (key id "${keyId}") is too short to hold IV and tag`, PayloadDecryptionFailed);
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      let plain: Buffer;
      try {
        plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      } catch {
        throw ApplicationFailure.nonRetryable(
          `An encrypted payload failed authentication with key id "${keyId}": it was altered, or that id names a different key than the one that encrypted it`,
          PayloadDecryptionFailed,
        );
      }
      return temporal.api.common.v1.Payload.decode(plain);
    });
  }
}
