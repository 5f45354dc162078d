/**
 * One page of a list read by keyset (ids after, or before, the previous page's last id), as the
 * services return it: no cursor, which is the HTTP layer's encoding of the last item's id.
 */
export interface KeysetSlice<T> {
  items: T[];
  /** Whether another page follows the last item. */
  hasMore: boolean;
}

/** Rows were fetched with limit + 1: the extra row only tells whether another page exists. */
export function keysetSlice<R, T>(rows: R[], limit: number, map: (row: R) => T): KeysetSlice<T> {
  const hasMore = rows.length > limit;
  return { items: (hasMore ? rows.slice(0, limit) : rows).map(map), hasMore };
}
