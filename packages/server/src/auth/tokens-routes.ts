import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  IdParamsSchema,
  LinkedIdentitySchema,
  LinkIdentityParamsSchema,
  TokenIdParamsSchema,
} from "@parley/client/wire";
import type { AppContext } from "../app-context.js";
import { authErrors, problemSchema } from "../http/schemas.js";
import { requireRole } from "./require-role.js";
import { linkIdentity, revokeToken, revokeUserTokens } from "./token-revocation.js";

/** Admin control of bearer tokens: revoke one, revoke a user's, link identity-provider subjects. */
export const tokensRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (
  app,
  { ctx },
) => {
  const admin = requireRole(ctx, "admin");
  const tags = ["users"];
  const security = [{ bearer: [] }];

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
