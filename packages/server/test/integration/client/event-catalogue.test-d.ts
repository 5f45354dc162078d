import type { EventDataMap as ClientEventDataMap } from "@parley/client";
import { describe, expectTypeOf, it } from "vitest";
import type { EventDataMap } from "../../../src/events/event-catalogue.js";

// Type-checked only, by vitest's typecheck (npm test) and by npm run typecheck: nothing here runs.
describe("the client's event types", () => {
  it("describe exactly the data the server sends", () => {
    expectTypeOf<ClientEventDataMap>().toEqualTypeOf<EventDataMap>();
  });
});
