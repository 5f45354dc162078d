import type { Kysely, Migration } from "kysely";

/**
 * `inbound_webhooks.allow_overrides`: whether a Slack-format post may replace the webhook's display
 * name and avatar with its own `username` / `icon_url` for that one message. Off unless an admin
 * turns it on, so a leaked token cannot impersonate another sender by default.
 */
export const inboundAllowOverrides: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("inbound_webhooks")
      .addColumn("allow_overrides", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.alterTable("inbound_webhooks").dropColumn("allow_overrides").execute();
  },
};
