import { displayPath, type StackPaths } from './paths';
import type { ComponentView, StackStatus } from './types';

const ORIGIN_TEXT: Record<NonNullable<ComponentView['origin']>, string> = {
  started: 'started now',
  reused: 'was already running',
  external: 'not managed by durable-agent',
};

/** The block `up` and `status` print for one component. */
export function formatComponent(view: ComponentView, paths: StackPaths): string[] {
  const kind = view.kind === 'external' ? '' : ` (${view.kind})`;
  const origin = view.origin ? ` (${ORIGIN_TEXT[view.origin]})` : '';
  const pid = view.pid === null ? '' : ` [pid ${view.pid}]`;
  const lines = [`${view.name}${kind}: ${view.state}${origin}${pid}`];
  if (view.address) lines.push(`  address  ${view.address}`);
  if (view.uiUrl) lines.push(`  web UI   ${view.uiUrl}`);
  if (view.dataPath) lines.push(`  data     ${displayPath(paths, view.dataPath)}`);
  if (view.logFile) lines.push(`  log      ${displayPath(paths, view.logFile)}`);
  if (view.note) lines.push(`  note     ${view.note}`);
  return lines;
}

export function formatStatus(status: StackStatus, paths: StackPaths): string[] {
  return [`durable-agent local stack (data dir ${status.dataDir})`, ...status.components.flatMap((view) => formatComponent(view, paths))];
}
