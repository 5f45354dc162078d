import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  IdParamsSchema,
  LinkedIdentitySchema,
  LinkIdentityParamsSchema,
  ListTokensParamsSchema,
  PageOf,
  TokenIdParamsSchema,
  TokenInfoSchema,
} from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { pageLimit } from "../http/pagination.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import { AppError } from "../errors/app-error.js";
import { listTokens } from "./list-tokens.js";
import { requireRole } from "./require-role.js";
import { linkIdentity, revokeToken, revokeUserTokens } from "./token-revocation.js";

/** Where a token list continues: after this token id. */
function encodeTokenCursor(tokenId: string): string {
  return Buffer.from(`tk:${tokenId}`, "utf8").toString("base64url");
}

function decodeTokenCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  const match = /^tk:([A-Za-z0-9_-]{1,64})$/.exec(
    Buffer.from(cursor, "base64url").toString("utf8"),
  );
  if (!match) throw new AppError("invalid_cursor", "the cursor is not one this list handed out");
  return match[1];
}

/**
 * Admin control of bearer tokens: list the ones that work, revoke one, revoke a user's, link
 * identity-provider subjects.
 */
export const tokensRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  const admin = requireRole(ctx, "admin");
  const tags = ["users"];
  const security = [{ bearer: [] }];

  app.get(
    "/api/admin/tokens",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary:
          "List the bearer tokens that still work (never the tokens), by token id; prefix: the id's first characters",
        querystring: ListTokensParamsSchema,
        response: { 200: PageOf(TokenInfoSchema), 400: problemSchema, ...authErrors },
      },
    },
    async (request) => {
      const limit = pageLimit(request.query);
      const slice = await listTokens(ctx, {
        afterTokenId: decodeTokenCursor(request.query.cursor),
        limit,
        prefix: request.query.prefix,
        userId: request.query.userId,
      });
      const last = slice.items.at(-1);
      return {
        items: slice.items,
        nextCursor: slice.hasMore && last ? encodeTokenCursor(last.tokenId) : null,
      };
    },
  );

  app.delete(
    "/api/admin/tokens/:tokenId",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Revoke one token by its id (the tokenId shown when it was issued; its jti)",
        params: TokenIdParamsSchema,
        response: { 204: { type: "null" }, 400: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await revokeToken(ctx, request.params.tokenId);
      return reply.code(204).send();
    },
  );

  app.post(
    "/api/admin/users/:id/revoke-tokens",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary: "Revoke every token the user holds now (tokens issued afterwards work)",
        params: IdParamsSchema,
        response: { 204: { type: "null" }, 400: problemSchema, 404: problemSchema, ...authErrors },
      },
    },
    async (request, reply) => {
      await revokeUserTokens(ctx, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    "/api/admin/users/:id/identities",
    {
      onRequest: admin,
      schema: {
        tags,
        security,
        summary:
          "Link an identity-provider subject (its tokens' sub) to this user: the only way such tokens act as a Parley user",
        params: IdParamsSchema,
        body: LinkIdentityParamsSchema,
        response: {
          201: LinkedIdentitySchema,
          400: problemSchema,
          404: problemSchema,
          ...authErrors,
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await linkIdentity(ctx, request.params.id, request.body.subject)),
  );
};
