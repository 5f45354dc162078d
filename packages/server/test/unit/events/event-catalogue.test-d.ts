import type { EventDataMap } from "@parley/client";
import { describe, expectTypeOf, it } from "vitest";
import type { eventData } from "../../../src/events/event-catalogue.js";

/** What the server's builder for each event returns. */
interface BuiltData {
  MESSAGE_CREATED: ReturnType<typeof eventData.messageCreated>;
  MESSAGE_UPDATED: ReturnType<typeof eventData.messageUpdated>;
  MESSAGE_DELETED: ReturnType<typeof eventData.messageDeleted>;
  REACTION_ADDED: ReturnType<typeof eventData.reaction>;
  REACTION_REMOVED: ReturnType<typeof eventData.reaction>;
  USER_JOINED_ROOM: ReturnType<typeof eventData.roomMembership>;
  USER_LEFT_ROOM: ReturnType<typeof eventData.roomMembership>;
  ROOM_CREATED: ReturnType<typeof eventData.roomCreated>;
  ROOM_DELETED: ReturnType<typeof eventData.roomDeleted>;
  FILE_UPLOADED: ReturnType<typeof eventData.fileUploaded>;
  FILE_INFECTION_DETECTED: ReturnType<typeof eventData.fileInfectionDetected>;
  ADMIN_USER_DISABLED: ReturnType<typeof eventData.adminUserAction>;
  ADMIN_USER_DELETED: ReturnType<typeof eventData.adminUserAction>;
  ADMIN_ROOM_DELETED: ReturnType<typeof eventData.adminRoomDeleted>;
  MESSAGE_AUTO_MODERATION_FLAGGED: ReturnType<typeof eventData.moderation>;
  MESSAGE_AUTO_MODERATION_QUARANTINED: ReturnType<typeof eventData.moderation>;
  WEBHOOK_ENDPOINT_DISABLED: ReturnType<typeof eventData.webhookEndpointDisabled>;
  WEBHOOK_TEST: ReturnType<typeof eventData.webhookTest>;
  WEBHOOK_VERIFICATION: ReturnType<typeof eventData.webhookVerification>;
}

// Type-checked only, by vitest's typecheck (npm test) and by npm run typecheck: nothing here runs.
describe("the event builders", () => {
  it("build, for every event, exactly the data the client declares", () => {
    expectTypeOf<BuiltData>().toEqualTypeOf<EventDataMap>();
  });
});
