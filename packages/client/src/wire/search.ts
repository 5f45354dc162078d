import { Type, type Static } from "@sinclair/typebox";
import { Id, listQueryProperties, Nullable, Timestamp } from "./common.js";

/**
 * `GET /api/search`: the words to find (`q`, every word, `word*` for a prefix), optionally in one
 * room (`roomId`), from one sender (`from`, a username) and before a time (`before`); newest first.
 */
export const SearchParamsSchema = Type.Object({
  ...listQueryProperties,
  q: Type.Optional(
    Type.String({
      description:
        "the words to find, each as a whole word (`deploy*` for a prefix); 1 to 16 words, at most 200 characters",
    }),
  ),
  roomId: Type.Optional(Id({ description: "only this room or DM (you must be a member)" })),
  from: Type.Optional(
    Type.String({ maxLength: 200, description: "only messages sent by this username" }),
  ),
  before: Type.Optional(Timestamp({ description: "only messages created before this time" })),
});
export type SearchParams = Static<typeof SearchParamsSchema>;

/** One message a search found. */
export const SearchHitSchema = Type.Object({
  roomId: Id(),
  messageId: Id(),
  /** The thread it replies in; null at top level. */
  threadId: Nullable(Id()),
  createdAt: Timestamp(),
  /**
   * HTML: the message's plain text, escaped, with the matched words in `<mark>` (no other markup);
   * at most 200 characters of it, cut around the first match with "…".
   */
  snippet: Type.String(),
});
export type SearchHit = Static<typeof SearchHitSchema>;
