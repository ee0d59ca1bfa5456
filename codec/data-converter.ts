import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from './aes-gcm-codec';
import { parseKeyList } from './encryption-keys';

/** The encryption settings as the configuration holds them (see workers/config.ts). */
export interface EncryptionSettings {
  /** `id:base64key,...`; unset means payloads are not encrypted. */
  keys?: string;
  /** The id new payloads are encrypted with; default the first listed key. */
  keyId?: string;
}

/** The codec for these settings, or undefined when encryption is off. */
export function payloadCodecFor(settings: EncryptionSettings): AesGcmPayloadCodec | undefined {
  if (!settings.keys) return undefined;
  const keys = parseKeyList(settings.keys);
  const currentKeyId = settings.keyId ?? [...keys.keys()][0];
  if (currentKeyId === undefined) return undefined;
  return new AesGcmPayloadCodec({ currentKeyId, keys });
}

/**
 * The data converter every Temporal client and worker of this project uses:
 * the default payload converter, plus the encryption codec when keys are
 * configured. Worker and clients must agree, or one side reads ciphertext.
 */
export function dataConverterFor(settings: EncryptionSettings): DataConverter {
  const codec = payloadCodecFor(settings);
  return codec ? { payloadCodecs: [codec] } : {};
}
