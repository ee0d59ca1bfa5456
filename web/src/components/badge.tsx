/** A count on a pill; read aloud as "<count> <what>". */
export function Badge({ count, what }: { count: number; what: string }) {
  return (
    <span class="badge">
      <span aria-hidden="true">{count}</span>
      <span class="visually-hidden">
        , {count} {what}
      </span>
    </span>
  );
}
