// The one place that calls the SDK's patched(): everything else goes through isPatched().
// eslint-disable-next-line @typescript-eslint/no-restricted-imports
import { patched } from '@temporalio/workflow';

/**
 * Patches, with one marker for a new run instead of one for each.
 *
 * `patched(id)` records a marker the first time a run takes the new path,
 * and the SDK core adds an upsert of the `TemporalChangeVersion` search
 * attribute to each (with every id so far: the value grows with each). A
 * new session went through 11 of them in its first turn: 22 events, about
 * 8 KB of history, 11 visibility writes on the server, all before its first
 * model call. The patches declared with `inBaseline` are taken together
 * instead: the session calls `startPatchBaseline()` first thing, which
 * records one marker, `PATCH_BASELINE`, for a new run, and `isPatched(id)`
 * is then true for every id in the baseline without a marker of its own.
 *
 * A run from before the baseline replays its first workflow task with no
 * such marker, so the baseline is false for the whole run, and `isPatched`
 * is `patched` for it, marker by marker, as before. The baseline is read
 * once and kept: asked again later, when the run has gone live,
 * `patched(PATCH_BASELINE)` would answer true in the middle of an old run.
 *
 * The baseline is closed. A patch added later is declared with a plain
 * string and checked with `isPatched` like the others; it gets its own
 * marker in every run. Putting it in the baseline would send runs that
 * started with the baseline, before the patch existed, down its new path on
 * replay (`test/unit/patch-baseline.test.ts` holds the list). A later
 * baseline can take the patches added since under a new id.
 *
 * An operator who looks for runs of a patch by `TemporalChangeVersion`
 * looks for the baseline's id as well.
 */
export const PATCH_BASELINE = 'patch-baseline-2026-12';

const covered = new Set<string>();
let baseline: boolean | undefined;

/** Declares a patch id as part of the baseline; returns the id. Only for patches older than `PATCH_BASELINE`. */
export function inBaseline(patchId: string): string {
  covered.add(patchId);
  return patchId;
}

/** Reads once, at the start of the run, whether it started with the baseline (a new run does, and records it). */
export function startPatchBaseline(): void {
  baseline ??= patched(PATCH_BASELINE);
}

/**
 * `patched(patchId)`, except that a run with the baseline takes a patch in
 * it without a marker. Before `startPatchBaseline()` it is `patched` alone:
 * the marker is then recorded, which replays the same way.
 */
export function isPatched(patchId: string): boolean {
  if (baseline === true && covered.has(patchId)) return true;
  return patched(patchId);
}

/** The ids the baseline covers, sorted. */
export function baselinePatchIds(): string[] {
  return [...covered].sort();
}

/**
 * The session says `running_tools` only once no call waits for a person (asked in react-turn.ts after an approval,
 * and in input-handlers.ts after an answered question, only while another call still waits). Here because both
 * modules ask it.
 */
export const RUNNING_TOOLS_AFTER_LAST_DECISION = 'running-tools-after-last-decision';
