import { EVENT_NAMES as CLIENT_EVENT_NAMES, WEBHOOK_TEST } from "@parley/client";
import { describe, expect, it } from "vitest";
import {
  EVENT_NAMES,
  WEBHOOK_TEST as SERVER_WEBHOOK_TEST,
} from "../../../src/events/event-catalogue.js";

// The data types are compared in event-catalogue.test-d.ts.
describe("the client's event types", () => {
  it("name the same events as the server's catalogue", () => {
    expect([...CLIENT_EVENT_NAMES]).toEqual([...EVENT_NAMES]);
    expect(WEBHOOK_TEST).toBe(SERVER_WEBHOOK_TEST);
  });
});
