import { createHash } from "node:crypto";
import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * An `onSend` hook for GET routes whose answer pages poll (the delivery log, a delivery): a weak
 * ETag from the answer's bytes, and `304 Not Modified` with no body when the client's
 * `If-None-Match` names it. A poll that finds nothing new then costs the query but not the
 * transfer, and the page knows there is nothing to redraw. Only 200 answers get a tag.
 */
export async function conditionalGet(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  if (reply.statusCode !== 200 || typeof payload !== "string") return payload;
  const etag = `W/"${createHash("sha256").update(payload).digest("base64url").slice(0, 27)}"`;
  void reply.header("etag", etag);
  // The answer depends on the bearer token (its role), so no shared cache may keep it.
  void reply.header("cache-control", "private, no-cache");
  const wanted = request.headers["if-none-match"];
  if (wanted !== undefined && wanted.split(",").some((tag) => tag.trim() === etag)) {
    void reply.code(304);
    void reply.removeHeader("content-type");
    void reply.removeHeader("content-length");
    return "";
  }
  return payload;
}

/** The 304 answer in route schemas (for the OpenAPI document). */
export const notModifiedSchema = Type.Null({
  description: "Not modified: the ETag in If-None-Match is still current (no body).",
});
