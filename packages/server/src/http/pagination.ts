import { DEFAULT_PAGE_LIMIT, type Page } from "@parley/client/wire";
import type { KeysetSlice } from "../db/keyset-slice.js";
import { AppError } from "../errors/app-error.js";

/**
 * Keyset pagination over descending or ascending integer ids: `?limit=` (default 50, max 200)
 * and an opaque `?cursor=` (the wire's listQueryProperties); answers `{items, nextCursor}`.
 * Routes decode the cursor into the id the service continues from, and turn the service's slice
 * into the answer's page.
 */
export type { Page };

/**
 * `?limit=` as the validator left it: given, or the default it filled in (the schema's type
 * cannot say that the default is always there).
 */
export function pageLimit(query: { limit?: number | undefined }): number {
  return query.limit ?? DEFAULT_PAGE_LIMIT;
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

/** A cursor of a list of changes: the last item's change time and id (`?updatedSince=`). */
export function encodeChangeCursor(change: { updatedAt: number; id: number }): string {
  return Buffer.from(`at:${change.updatedAt}:${change.id}`, "utf8").toString("base64url");
}

/** Where a list of changes continues; undefined for the first page. */
export function decodeChangeCursor(
  cursor: string | undefined,
): { updatedAt: number; id: number } | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  const match = /^at:(\d{1,15}):(\d{1,15})$/.exec(
    Buffer.from(cursor, "base64url").toString("utf8"),
  );
  if (!match) throw new AppError("invalid_cursor", "the cursor is not one this list handed out");
  return { updatedAt: Number(match[1]), id: Number(match[2]) };
}

/** The answer for a slice: the next page continues after its last item's id. */
export function toPage<T extends { id: number }>(slice: KeysetSlice<T>): Page<T> {
  const last = slice.items[slice.items.length - 1];
  return {
    items: slice.items,
    nextCursor: slice.hasMore && last ? encodeCursor(last.id) : null,
  };
}
