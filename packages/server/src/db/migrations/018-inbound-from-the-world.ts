import type { Kysely, Migration } from "kysely";

/**
 * Inbound from the world (docs/inbound-webhooks.md, "Idempotency" and "Signed senders"):
 * - `inbound_idempotency_keys`: one row per (inbound webhook, key), the key by its SHA-256 only.
 *   The row is the claim: inserted before the post (the primary key lets one request win), it
 *   holds the answer once the post succeeded (`status` null while in flight), and is deleted when
 *   the post was refused. `body_hash` tells a retry (same bytes) from a reuse (other bytes).
 *   `expires_at` (24 h after the claim) is read on every lookup and indexed for the retention job.
 * - `inbound_webhooks.signing_secret_ciphertext`: the GitHub and Stripe signing secret, sealed
 *   with the server's secret key as the outbound secrets are (null: none set).
 */
export const inboundFromTheWorld: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("inbound_webhooks")
      .addColumn("signing_secret_ciphertext", "text")
      .execute();
    await db.schema
      .createTable("inbound_idempotency_keys")
      .addColumn("inbound_webhook_id", "bigint", (c) =>
        c.notNull().references("inbound_webhooks.id").onDelete("cascade"),
      )
      .addColumn("key_hash", "varchar(64)", (c) => c.notNull())
      .addColumn("body_hash", "varchar(64)", (c) => c.notNull())
      .addColumn("claimed_at", "bigint", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .addColumn("status", "integer")
      .addColumn("answer_headers", "text")
      .addColumn("answer_body", "text")
      .addPrimaryKeyConstraint("inbound_idempotency_keys_pk", ["inbound_webhook_id", "key_hash"])
      .execute();
    await db.schema
      .createIndex("inbound_idempotency_keys_expires")
      .on("inbound_idempotency_keys")
      .column("expires_at")
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropTable("inbound_idempotency_keys").execute();
    await db.schema
      .alterTable("inbound_webhooks")
      .dropColumn("signing_secret_ciphertext")
      .execute();
  },
};
