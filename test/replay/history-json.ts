import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';
import { historyFromJSON, historyToJSON, type History } from '@temporalio/common/lib/proto-utils';

/*
 * The SDK's historyToJSON/historyFromJSON, made independent of how npm laid
 * out protobufjs. @temporalio/common and @temporalio/proto each get a nested
 * copy of protobufjs 8 here (the root holds 7 for another package), and the
 * protojson of common's copy rejects the types built by proto's copy with
 * "type must be a Type". The protojson of the copy that built the types works,
 * and writes the same proto3 JSON that the Web UI and `temporal workflow show
 * --output json` produce.
 */

interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
}

let cached: { protojson: ProtoJson; historyType: { fromObject(o: unknown): unknown } } | undefined;
function codec() {
  if (cached) return cached;
  const fromProto = require.resolve('protobufjs/ext/protojson', { paths: [dirname(require.resolve('@temporalio/proto'))] });
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const protojson = require(fromProto) as ProtoJson;
  const patched = patchProtobufRoot(proto) as unknown as { lookupType(name: string): { fromObject(o: unknown): unknown } };
  cached = { protojson, historyType: patched.lookupType('temporal.api.history.v1.History') };
  return cached;
}

/** A history as proto3 JSON text, the format of history files from other Temporal tools. */
export function historyToJson(history: History): string {
  try {
    return historyToJSON(history);
  } catch {
    const { protojson, historyType } = codec();
    return JSON.stringify(protojson.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history)), null, 2);
  }
}

/** Reads a history file written by `historyToJson` (or exported from the Web UI or the CLI). */
export function readHistoryFile(path: string): History {
  const json: unknown = JSON.parse(readFileSync(path, 'utf8'));
  try {
    return historyFromJSON(json);
  } catch {
    const { protojson, historyType } = codec();
    const loaded = protojson.fromJson(historyType, json, { ignoreUnknownFields: true });
    if (loaded == null) throw new TypeError(`${path} is not a history`);
    return loaded as History;
  }
}
