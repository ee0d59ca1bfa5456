import type { Client } from '@temporalio/client';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import type { CallModelInput } from './activity-types';

/** A run of a session: prompt part ids are per run. */
export interface PartOwner {
  workflowId: string;
  runId: string;
}

/**
 * Reads parts of a run: at least every id in `wanted` that any of its model
 * calls carried inline, and whatever other parts it met on the way. Returns
 * them by id, as JSON text.
 */
export type RunPartsReader = (owner: PartOwner, wanted: ReadonlySet<string>) => Promise<Map<string, string>>;

/**
 * The reverse read's page size counts the history's batches (the events one
 * workflow task or one server transaction wrote together), not events. Four
 * batches hold the previous step's model call (about a dozen events); each
 * page after the first asks for twice as many, so a read back to the start of
 * a 1,000-event run takes about six pages.
 */
const FIRST_PAGE_BATCHES = 4;
const MAX_PAGE_BATCHES = 512;

/**
 * The parts of a run, read from its history, newest events first: each part
 * was inline in the `callModel` (or `holdPromptParts`) input that first sent it, and that input's
 * scheduled event is in the run's history before any call that names the
 * part by id. A worker that lacks only the previous step's parts (that step
 * ran on another worker) reads one small page; one that lacks everything (it
 * just started) reads back to the run's first call, in pages that double. The client's data converter
 * decodes (and decrypts) the inputs. Of two inputs carrying an id, the
 * newer wins: replay by changed code can make an id stand for a new text,
 * and the session then resends its prompt whole with it (the activity's
 * digest check), so the newest copy is the one the workflow means now.
 */
export async function readRunPartsFromHistory(client: Client, owner: PartOwner, wanted: ReadonlySet<string>, firstPageBatches = FIRST_PAGE_BATCHES): Promise<Map<string, string>> {
  const converter = client.options.loadedDataConverter;
  const parts = new Map<string, string>();
  let found = 0;
  let nextPageToken: Uint8Array | undefined;
  let pageBatches = firstPageBatches;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace: client.options.namespace,
      execution: { workflowId: owner.workflowId, runId: owner.runId },
      maximumPageSize: pageBatches,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const event of page.history?.events ?? []) {
      const carried = await scheduledPromptParts(converter, event);
      if (!carried) continue;
      for (const [id, value] of Object.entries(carried)) {
        if (parts.has(id)) continue;
        parts.set(id, JSON.stringify(value));
        if (wanted.has(id)) found += 1;
      }
    }
    if (found === wanted.size) break;
    nextPageToken = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
    pageBatches = Math.min(pageBatches * 2, MAX_PAGE_BATCHES);
  } while (nextPageToken);
  return parts;
}

/** The activities whose inputs carry prompt parts: model calls, and parts sent ahead of one (`holdPromptParts`). */
const PART_CARRIERS = new Set(['callModel', 'holdPromptParts']);

/** The prompt parts an event's scheduled input carries inline (a model call's, or ones sent ahead of it); undefined for any other event. */
export async function scheduledPromptParts(converter: LoadedDataConverter, event: temporal.api.history.v1.IHistoryEvent): Promise<Record<string, unknown> | undefined> {
  const scheduled = event.activityTaskScheduledEventAttributes;
  if (!PART_CARRIERS.has(scheduled?.activityType?.name ?? '')) return undefined;
  const input = await decodeFromPayloadsAtIndex<{ prompt?: { parts?: Record<string, unknown> } }>(converter, 0, (scheduled!.input?.payloads ?? []) as Payload[]);
  return input?.prompt?.parts ?? {};
}

/** The `callModel` input an event schedules, decoded (and decrypted) by the client's converter, with its payloads; undefined for any other event. */
export async function scheduledModelCall(converter: LoadedDataConverter, event: temporal.api.history.v1.IHistoryEvent): Promise<{ input: CallModelInput; payloads: Payload[] } | undefined> {
  const scheduled = event.activityTaskScheduledEventAttributes;
  if (scheduled?.activityType?.name !== 'callModel') return undefined;
  const payloads = (scheduled.input?.payloads ?? []) as Payload[];
  return { input: await decodeFromPayloadsAtIndex<CallModelInput>(converter, 0, payloads), payloads };
}
