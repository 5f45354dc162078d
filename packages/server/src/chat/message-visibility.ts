import type { MessagesTable } from "../db/schema.js";

/** Quarantined (pending review) and rejected messages are shown to admins only. */
export const HIDDEN_STATUSES = ["QUARANTINED", "REJECTED"] as const;

/** Whether a message with this moderation status is hidden from everyone but admins. */
export function isHidden(status: MessagesTable["moderation_status"]): boolean {
  return (HIDDEN_STATUSES as readonly string[]).includes(status);
}
