import { paginate } from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { formatTable, printJson } from "./format-table.js";
import { findUser } from "./users-api.js";

/** `parley tokens list`: the tokens that still work, by id (never the tokens themselves). */
export async function tokensList(
  io: CliIo,
  options: { user?: string; prefix?: string; json?: boolean },
): Promise<void> {
  if (options.prefix !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(options.prefix))
    throw new CliError(
      `--prefix must be the start of a token id (A-Z a-z 0-9 _ -), got "${options.prefix}"`,
    );
  const { api } = apiFromEnv(io.env);
  const userId = options.user === undefined ? undefined : (await findUser(api, options.user)).id;
  const tokens = await paginate.all(api, "GET /api/admin/tokens", {
    limit: 200,
    ...(userId === undefined ? {} : { userId }),
    ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
  });
  if (options.json) return printJson(io.out, tokens);
  if (tokens.length === 0) return io.out("No tokens match.");
  for (const line of formatTable(
    tokens,
    [
      ["token id", (t) => t.tokenId],
      ["user", (t) => t.username],
      ["role", (t) => t.role],
      ["issued", (t) => t.issuedAt],
      ["expires", (t) => t.expiresAt],
    ],
    io.columns,
  ))
    io.out(line);
}

/** `parley tokens revoke <tokenId>`: that token stops working at once, in every process. */
export async function tokensRevoke(
  io: CliIo,
  tokenId: string,
  options: { json?: boolean },
): Promise<void> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(tokenId))
    throw new CliError(`token id must be A-Z a-z 0-9 _ -, 1 to 64 characters, got "${tokenId}"`);
  const { api } = apiFromEnv(io.env);
  await api("DELETE /api/admin/tokens/{tokenId}", { tokenId });
  if (options.json) return printJson(io.out, { tokenId, revoked: true });
  io.out(`Revoked token ${tokenId}.`);
}
