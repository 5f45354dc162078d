import { AppError } from "../errors/app-error.js";

/**
 * The answers for a message id that cannot be used. On the chat API a message that never existed
 * in the room (or is hidden from this caller pending review) is 404 `message_not_found`; to an
 * inbound webhook, a message it did not post is 404 `not_found`, like an unknown token. A deleted
 * message is 410 `message_deleted` to everyone allowed to know it existed.
 */
export function messageNotFound(
  roomId: number,
  messageId: number,
  caller: "chat" | "integration" = "chat",
): AppError {
  return new AppError(
    caller === "integration" ? "not_found" : "message_not_found",
    `no message ${messageId} in room ${roomId}`,
  );
}

export function messageDeleted(messageId: number): AppError {
  return new AppError("message_deleted", `message ${messageId} was deleted`);
}
