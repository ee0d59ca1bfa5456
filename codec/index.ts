export { AesGcmPayloadCodec, ENCRYPTED_ENCODING, METADATA_KEY_ID, PayloadDecryptionFailed } from './aes-gcm-codec';
export { dataConverterFor, payloadCodecFor, type EncryptionSettings } from './data-converter';
export { KEY_BYTES, keyListProblems, keyMaterialStrings, parseKeyList, type EncryptionKeyring } from './encryption-keys';
