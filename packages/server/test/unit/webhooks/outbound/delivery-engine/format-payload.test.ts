import { HTTP } from "cloudevents";
import { describe, expect, it } from "vitest";
import { envelopeAround } from "../../../../../src/events/build-envelope.js";
import { formatPayload } from "../../../../../src/webhooks/outbound/delivery-engine/format-payload.js";

const EVENT_ID = "evt_2VfGdcHe0Ca2sFS9jN6M4y0000000004";

function frozenEnvelope(webhookId: number, data: Record<string, unknown>): string {
  const { prefix, suffix } = envelopeAround(
    "MESSAGE_CREATED",
    Date.UTC(2026, 10, 27),
    data as never,
  );
  return `${prefix}${webhookId}${suffix}`;
}

describe("formatPayload", () => {
  const data = { roomId: 3, messageId: 42, senderId: 7, note: 'a "quoted" ,"data": é' };
  const frozen = frozenEnvelope(4, data);

  it("sends the frozen envelope's bytes unchanged in the parley format", () => {
    const payload = formatPayload("parley", frozen, EVENT_ID);
    expect(payload.body.toString("utf8")).toBe(frozen);
    expect(payload.contentType).toBe("application/json");
    expect(payload.headers).toEqual({});
  });

  it("keeps the data's exact bytes in structured mode, with the attributes around them", () => {
    const payload = formatPayload("cloudevents", frozen, EVENT_ID);
    const text = payload.body.toString("utf8");
    expect(text).toContain(`,"data":${JSON.stringify(data)}}`);
    const event = HTTP.toEvent({ headers: { "content-type": payload.contentType }, body: text });
    expect(event).toMatchObject({
      specversion: "1.0",
      id: EVENT_ID,
      type: "io.parley.MESSAGE_CREATED",
      source: "/rooms/3",
      subject: "messages/42",
      time: "2026-11-27T00:00:00.000Z",
      webhookid: 4,
      data,
    });
  });

  it("sends the data's bytes as the body in binary mode, the attributes as ce- headers", () => {
    const payload = formatPayload("cloudevents-binary", frozen, EVENT_ID);
    expect(payload.body.toString("utf8")).toBe(JSON.stringify(data));
    expect(payload.headers).toEqual({
      "ce-specversion": "1.0",
      "ce-id": EVENT_ID,
      "ce-source": "/rooms/3",
      "ce-type": "io.parley.MESSAGE_CREATED",
      "ce-time": "2026-11-27T00:00:00.000Z",
      "ce-subject": "messages/42",
      "ce-webhookid": "4",
    });
  });

  it("reads an envelope written in another key order whole", () => {
    const reordered = JSON.stringify({
      data: { roomId: 9 },
      webhookId: 5,
      event: "ROOM_CREATED",
      timestamp: "2026-11-27T00:00:00.000Z",
    });
    const payload = formatPayload("cloudevents", reordered, EVENT_ID);
    expect(JSON.parse(payload.body.toString("utf8"))).toMatchObject({
      type: "io.parley.ROOM_CREATED",
      source: "/rooms/9",
      webhookid: 5,
      data: { roomId: 9 },
    });
  });
});
