import { AppError } from "../errors/app-error.js";

/**
 * Keyset pagination over descending or ascending integer ids: `?limit=` (default 50, max 200)
 * and an opaque `?cursor=`; answers `{items, nextCursor}`.
 */
export const listQuerySchema = {
  limit: { type: "integer", minimum: 1, maximum: 200, default: 50 },
  cursor: { type: "string", maxLength: 200 },
} as const;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export function encodeCursor(id: number): string {
  return Buffer.from(`id:${id}`, "utf8").toString("base64url");
}

/** The id after (or before) which the next page starts; undefined for the first page. */
export function decodeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  const match = /^id:(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) throw new AppError("invalid_cursor", "the cursor is not one this list handed out");
  return Number(match[1]);
}

/** Rows were fetched with limit + 1: the extra row only tells whether another page exists. */
export function toPage<R extends { id: number }, T>(
  rows: R[],
  limit: number,
  map: (row: R) => T,
): Page<T> {
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  return {
    items: pageRows.map(map),
    nextCursor: more ? encodeCursor(pageRows[pageRows.length - 1]!.id) : null,
  };
}
