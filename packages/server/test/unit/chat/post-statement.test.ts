import { describe, expect, it } from "vitest";
import { postStatement, type ClaimStatement } from "../../../src/chat/post-message.js";
import { postStatementValues } from "../../../src/chat/messages-repository.js";
import { combinedStatementOf, statementOf } from "../../../src/db/unit-of-work.js";
import { EVENT_AUDIENCE } from "../../../src/events/event-catalogue.js";
import { EventSpine } from "../../../src/events/event-spine.js";
import { streamNotification, STREAM_CHANNEL } from "../../../src/realtime/postgres-bus.js";
import { preparedFor } from "../../../src/webhooks/outbound/delivery-engine/queue-deliveries.js";
import {
  IDEMPOTENCY_CLAIM_COLUMNS,
  IDEMPOTENCY_CLAIM_TYPES,
  idempotencyClaimBatchCtes,
  idempotencyClaimCte,
  idempotencyClaimValues,
} from "../../../src/webhooks/inbound/idempotency/idempotency-repository.js";
import { IDEMPOTENCY_ABANDONED_AFTER_MS } from "../../../src/webhooks/inbound/idempotency/run-idempotent.js";

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

/** An Idempotency-Key's claim, kept with the post's answer (webhooks/inbound/idempotency/). */
const claim: ClaimStatement = {
  cte: (first) => idempotencyClaimCte(first, IDEMPOTENCY_ABANDONED_AFTER_MS),
  values: idempotencyClaimValues(
    {
      inboundWebhookId: 4,
      keyHash: "k".repeat(64),
      bodyHash: "b".repeat(64),
      now: NOW,
      expiresAt: NOW + 86_400_000,
      status: 200,
      headers: "{}",
    },
    { prefix: '{"messageId":', suffix: "}" },
  ),
  combined: {
    columns: IDEMPOTENCY_CLAIM_COLUMNS,
    types: IDEMPOTENCY_CLAIM_TYPES,
    ctes: idempotencyClaimBatchCtes(IDEMPOTENCY_ABANDONED_AFTER_MS),
  },
};

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

  it("on postgres, one post with its idempotency claim", async () => {
    const unit = postStatement(input, values, NOW, claim);
    const { text } = statementOf(unit, postgresSpine(), new Map(), undefined);
    await expect(`${text}\n`).toMatchFileSnapshot(
      "__snapshots__/post-statement.postgres-claimed.sql",
    );
  });

  it("on postgres, posts with their idempotency claims combined", async () => {
    const units = [
      postStatement(input, values, NOW, claim),
      postStatement(input, values, NOW, claim),
    ];
    const { text } = combinedStatementOf(units as never, postgresSpine(), new Map(), [
      undefined,
      undefined,
    ]);
    await expect(`${text}\n`).toMatchFileSnapshot(
      "__snapshots__/post-statement.postgres-claimed-combined.sql",
    );
  });

  it("on sqlite, the fan-out of the post's transaction", async () => {
    const { text } = preparedFor("sqlite", EVENT_AUDIENCE.MESSAGE_CREATED.outbound);
    await expect(`${text}\n`).toMatchFileSnapshot("__snapshots__/post-fan-out.sqlite.sql");
  });
});
