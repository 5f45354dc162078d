import type { TokenInfo } from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { keysetSlice, type KeysetSlice } from "../db/keyset-slice.js";
import { isoTime } from "../events/event-catalogue.js";
import { listLiveTokenRows } from "./issued-tokens-repository.js";

/**
 * The bearer tokens that still work (issued since migration 027), by token id: the ones to
 * revoke when one leaked, found by the start of the id the issuer was shown, or by user.
 */
export async function listTokens(
  ctx: AppContext,
  page: {
    afterTokenId: string | undefined;
    limit: number;
    prefix?: string | undefined;
    userId?: number | undefined;
  },
): Promise<KeysetSlice<TokenInfo>> {
  const rows = await listLiveTokenRows(ctx.db, { ...page, now: ctx.now() });
  return keysetSlice(rows, page.limit, (row) => ({
    tokenId: row.token_id,
    userId: Number(row.user_id),
    username: row.username,
    role: row.role,
    issuedAt: isoTime(Number(row.issued_at)),
    expiresAt: isoTime(Number(row.expires_at)),
  }));
}
