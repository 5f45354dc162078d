import { describe, expect, it } from "vitest";
import { postStatement } from "../../../src/chat/post-message.js";
import { postStatementValues } from "../../../src/chat/messages-repository.js";
import { combinedStatementOf, statementOf } from "../../../src/db/unit-of-work.js";
import { EVENT_AUDIENCE } from "../../../src/events/event-catalogue.js";
import { EventSpine } from "../../../src/events/event-spine.js";
import { streamNotification, STREAM_CHANNEL } from "../../../src/realtime/postgres-bus.js";
import { preparedFor } from "../../../src/webhooks/outbound/delivery-engine/queue-deliveries.js";

/**
 * The SQL a post runs, as a reviewer reads it: on PostgreSQL the one statement assembled from
 * chat/messages-repository.ts (the post's CTEs), the spine's emit CTEs (the stream's NOTIFY and
 * the fan-out of queue-deliveries.ts) and db/unit-of-work.ts (the answer), alone and combined; on
 * SQLite the fan-out the post's transaction runs after its repository statements. A change to any
 * of them shows here as a diff of the .sql files.
 */
const NOW = Date.parse("2026-11-22T10:00:00.000Z");

function postgresSpine(): EventSpine {
  const { spine } = EventSpine.create({
    dialect: "postgres",
    outboundEnabled: true,
    now: () => NOW,
  });
  spine.onEmitInTransaction(streamNotification(STREAM_CHANNEL));
  return spine;
}

const input = {
  roomId: 3,
  content: "Hello",
  sender: { type: "user" as const, userId: 12, username: "ada", displayName: "Ada" },
};
const values = postStatementValues(
  {
    room_id: 3,
    sender_user_id: 12,
    inbound_webhook_id: null,
    sender_display_name: "Ada",
    sender_avatar_url: null,
    content: "Hello",
    content_format: "markdown",
    content_text: "Hello",
    created_at: NOW,
  },
  null,
);

describe("the post statement", () => {
  it("on postgres, one post", async () => {
    const unit = postStatement(input, values, NOW);
    const { text } = statementOf(unit, postgresSpine(), new Map(), undefined);
    await expect(`${text}\n`).toMatchFileSnapshot("__snapshots__/post-statement.postgres.sql");
  });

  it("on postgres, posts combined", async () => {
    const units = [postStatement(input, values, NOW), postStatement(input, values, NOW)];
    const { text } = combinedStatementOf(units as never, postgresSpine(), new Map(), [
      undefined,
      undefined,
    ]);
    await expect(`${text}\n`).toMatchFileSnapshot(
      "__snapshots__/post-statement.postgres-combined.sql",
    );
  });

  it("on sqlite, the fan-out of the post's transaction", async () => {
    const { text } = preparedFor("sqlite", EVENT_AUDIENCE.MESSAGE_CREATED.outbound);
    await expect(`${text}\n`).toMatchFileSnapshot("__snapshots__/post-fan-out.sqlite.sql");
  });
});
