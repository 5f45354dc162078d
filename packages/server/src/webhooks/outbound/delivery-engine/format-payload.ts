import type { PayloadFormat } from "../../../db/schema.js";

/** A delivery's body as one attempt sends it, with the headers that describe it. */
export interface FormattedPayload {
  body: Buffer;
  contentType: string;
  /** The CloudEvents attributes of binary mode (`ce-*`); empty otherwise. */
  headers: Record<string, string>;
}

/** The envelope every delivery row freezes (events/build-envelope.ts). */
interface Envelope {
  event: string;
  timestamp: string;
  webhookId: number;
  data: Record<string, unknown>;
}

/** The CloudEvents type prefix: `io.parley.MESSAGE_CREATED`. */
export const CLOUDEVENTS_TYPE_PREFIX = "io.parley.";

function idOf(data: Record<string, unknown>, key: string): number | undefined {
  const value = data[key];
  return typeof value === "number" ? value : undefined;
}

/**
 * The CloudEvents 1.0 attributes of an envelope (docs/webhooks.md, "CloudEvents"): `id` is the
 * event id (the same as `webhook-id`, on every attempt and redelivery), `source` the room for room
 * events, `subject` the message when the data names one, `time` the envelope's timestamp, and the
 * extension `webhookid` the endpoint.
 */
export function cloudEventAttributes(
  envelope: Envelope,
  eventId: string,
): Record<string, string | number> {
  const roomId = idOf(envelope.data, "roomId");
  const messageId = idOf(envelope.data, "messageId");
  return {
    specversion: "1.0",
    id: eventId,
    source: roomId === undefined ? "/" : `/rooms/${roomId}`,
    type: `${CLOUDEVENTS_TYPE_PREFIX}${envelope.event}`,
    time: envelope.timestamp,
    ...(messageId === undefined ? {} : { subject: `messages/${messageId}` }),
    datacontenttype: "application/json",
    webhookid: envelope.webhookId,
  };
}

/** `,"data":`: where the frozen envelope's data begins (events/build-envelope.ts). */
const DATA_KEY = ',"data":';

/**
 * The envelope's head (event, timestamp, webhookId), its data, and the data's exact JSON text.
 * The envelope is written as `{"event":..,"timestamp":..,"webhookId":..,"data":{..}}` (names and
 * times hold no `,"data":`), so the data's text is cut out rather than written again; anything
 * else is parsed whole.
 */
function splitEnvelope(frozen: string): { envelope: Envelope; dataText: string } {
  const at = frozen.indexOf(DATA_KEY);
  if (at > 0 && frozen.endsWith("}")) {
    const dataText = frozen.slice(at + DATA_KEY.length, -1);
    const head = JSON.parse(`${frozen.slice(0, at)}}`) as Omit<Envelope, "data">;
    if (typeof head.event === "string" && typeof head.webhookId === "number") {
      return {
        envelope: { ...head, data: JSON.parse(dataText) as Record<string, unknown> },
        dataText,
      };
    }
  }
  const envelope = JSON.parse(frozen) as Envelope;
  return { envelope, dataText: JSON.stringify(envelope.data) };
}

/**
 * The body one attempt sends, in the endpoint's format: the frozen envelope's bytes as they are
 * ("parley"), or the same event as a CloudEvent, structured (`application/cloudevents+json`) or
 * binary (the data as the body, the attributes as `ce-*` headers). The data's bytes are the
 * frozen ones in every format. Every signature scheme signs the bytes returned here.
 */
export function formatPayload(
  format: PayloadFormat,
  frozen: string,
  eventId: string,
): FormattedPayload {
  if (format === "parley") {
    return { body: Buffer.from(frozen, "utf8"), contentType: "application/json", headers: {} };
  }
  const { envelope, dataText } = splitEnvelope(frozen);
  const attributes = cloudEventAttributes(envelope, eventId);
  if (format === "cloudevents") {
    const head = JSON.stringify(attributes);
    return {
      body: Buffer.from(`${head.slice(0, -1)}${DATA_KEY}${dataText}}`, "utf8"),
      contentType: "application/cloudevents+json",
      headers: {},
    };
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    // datacontenttype travels as Content-Type in binary mode.
    if (name !== "datacontenttype") headers[`ce-${name}`] = String(value);
  }
  return { body: Buffer.from(dataText, "utf8"), contentType: "application/json", headers };
}
