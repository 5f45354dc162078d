import { describe, expectTypeOf, it } from "vitest";
import {
  parseWebhookEvent,
  type EVENT_NAMES,
  type MessageCreatedData,
  type ModerationEventData,
  type RoomCreatedData,
  type WebhookEvent,
  type WebhookTestData,
} from "../src/index.js";

// Type-checked only, by vitest's typecheck (npm test) and by npm run typecheck: nothing here runs.

describe("parseWebhookEvent's types", () => {
  it("answers a WebhookEvent whose data narrows by the event name", () => {
    const event = parseWebhookEvent("{}");
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    expectTypeOf(event.event).toEqualTypeOf<
      (typeof EVENT_NAMES)[number] | "WEBHOOK_TEST" | "WEBHOOK_VERIFICATION"
    >();
    expectTypeOf(event.webhookId).toEqualTypeOf<number>();
    expectTypeOf(describe_).returns.toEqualTypeOf<string>();
  });
});

/** A receiver's switch: each branch sees its event's data type. */
function describe_(event: WebhookEvent): string {
  switch (event.event) {
    case "MESSAGE_CREATED":
      expectTypeOf(event.data).toEqualTypeOf<MessageCreatedData>();
      expectTypeOf(event.data.senderId).toEqualTypeOf<number | null>();
      return `message ${event.data.messageId} in room ${event.data.roomId}`;
    case "ROOM_CREATED":
      expectTypeOf(event.data).toEqualTypeOf<RoomCreatedData>();
      expectTypeOf(event.data.convertedFromDm).toEqualTypeOf<true | undefined>();
      return `room ${event.data.roomId}`;
    case "MESSAGE_AUTO_MODERATION_QUARANTINED":
      expectTypeOf(event.data).toEqualTypeOf<ModerationEventData>();
      expectTypeOf(event.data.band).toEqualTypeOf<"low" | "medium" | "high">();
      // @ts-expect-error moderation events carry no content
      return event.data.content;
    case "WEBHOOK_TEST":
      expectTypeOf(event.data).toEqualTypeOf<WebhookTestData>();
      return event.data.message;
    default:
      return event.event;
  }
}
