/**
 * What a recall returned, by id and tier in rank order: compared with a warm
 * recall of the same query. Not the region, whose lines carry each memory's
 * age ("1 minute ago"), which moves while a slow seed and the cold runs go on.
 */
export function recalledTiers(result: { strong: Array<{ id: string }>; weak: Array<{ id: string }> }): string {
  return `${result.strong.map((m) => m.id).join(',')}|${result.weak.map((m) => m.id).join(',')}`;
}
