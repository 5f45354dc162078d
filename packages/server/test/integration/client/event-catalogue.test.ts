import {
  EVENT_NAMES as CLIENT_EVENT_NAMES,
  WEBHOOK_TEST,
  type EventDataMap as ClientEventDataMap,
} from "@parley/client";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  EVENT_NAMES,
  WEBHOOK_TEST as SERVER_WEBHOOK_TEST,
  type EventDataMap,
} from "../../../src/events/event-catalogue.js";

describe("the client's event types", () => {
  it("name the same events as the server's catalogue", () => {
    expect([...CLIENT_EVENT_NAMES]).toEqual([...EVENT_NAMES]);
    expect(WEBHOOK_TEST).toBe(SERVER_WEBHOOK_TEST);
  });

  it("describe exactly the data the server sends", () => {
    expectTypeOf<ClientEventDataMap>().toEqualTypeOf<EventDataMap>();
  });
});
