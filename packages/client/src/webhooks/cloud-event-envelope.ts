import { WebhookPayloadError } from "../errors/webhook-payload-error.js";
import { toBytes, type RawBody } from "./raw-body.js";
import { headerValue, type WebhookHeaders } from "./verify-signature-headers.js";

/** CloudEvents `type` of a Parley event: `io.parley.<EVENT>`. */
const TYPE_PREFIX = "io.parley.";

/**
 * The Parley envelope of a delivery sent as a CloudEvent (an endpoint with `payloadFormat`
 * `cloudevents` or `cloudevents-binary`), as JSON text for parseWebhookEvent; undefined when the
 * request is no CloudEvent (the envelope is then the body itself). Structured mode is recognized
 * by `Content-Type: application/cloudevents+json`, binary mode by a `ce-specversion` header.
 */
export function cloudEventEnvelope(
  rawBody: RawBody,
  headers: WebhookHeaders | undefined,
): string | undefined {
  if (headers === undefined) return undefined;
  const contentType = headerValue(headers, "content-type") ?? "";
  const binaryVersion = headerValue(headers, "ce-specversion");
  if (!contentType.startsWith("application/cloudevents+json") && binaryVersion === undefined)
    return undefined;
  const text = Buffer.from(toBytes(rawBody)).toString("utf8");
  let attributes: Record<string, unknown>;
  let data: unknown;
  try {
    if (binaryVersion === undefined) {
      attributes = JSON.parse(text) as Record<string, unknown>;
      data = attributes.data;
    } else {
      attributes = {
        specversion: binaryVersion,
        type: headerValue(headers, "ce-type"),
        time: headerValue(headers, "ce-time"),
        webhookid: Number(headerValue(headers, "ce-webhookid")),
      };
      data = JSON.parse(text);
    }
  } catch {
    throw new WebhookPayloadError("the CloudEvent's body is not JSON", "body");
  }
  if (attributes.specversion !== "1.0")
    throw new WebhookPayloadError("the CloudEvent's specversion is not 1.0", "specversion");
  const type = attributes.type;
  if (typeof type !== "string" || !type.startsWith(TYPE_PREFIX))
    throw new WebhookPayloadError(`the CloudEvent's type is not ${TYPE_PREFIX}<EVENT>`, "type");
  return JSON.stringify({
    event: type.slice(TYPE_PREFIX.length),
    timestamp: attributes.time,
    webhookId: attributes.webhookid,
    data,
  });
}
