import type { EndpointAuthParams, EndpointTlsParams } from "@parley/client/wire";
import { AppError } from "../../../errors/app-error.js";
import type { Ordering, PayloadFormat, SignatureScheme } from "../../../db/schema.js";
import { isEventName, WEBHOOK_TEST } from "../../../events/event-catalogue.js";
import { eventsMatching, isEventPattern } from "../../../events/event-subscriptions.js";
import { decodeWhsecSecret, WHSEC_PREFIX } from "../decode-whsec-secret.js";
import { checkWebhookUrl, type UrlPolicy } from "../transport/ssrf-guard.js";
import { whyHeaderIsReserved } from "../reserved-header.js";

/** Fields of an endpoint as an admin sends them (create: all but `enabled`; update: any). */
export interface EndpointInput {
  name?: string | undefined;
  url?: string | undefined;
  secret?: string | undefined;
  events?: string[] | undefined;
  enabled?: boolean | undefined;
  signatureScheme?: SignatureScheme | undefined;
  payloadFormat?: PayloadFormat | undefined;
  traceContext?: boolean | undefined;
  roomIds?: number[] | null | undefined;
  headers?: Record<string, string> | null | undefined;
  maxDeliveriesPerSecond?: number | null | undefined;
  ordering?: Ordering | undefined;
  /** Checked by the service (validateAuth, validateTls): a PATCH merges with what is stored. */
  auth?: EndpointAuthParams | null | undefined;
  tls?: EndpointTlsParams | null | undefined;
}

/** The same fields once checked: only those given are present. */
export interface ValidEndpointInput {
  name?: string;
  url?: string;
  secret?: string;
  /** Event names and wildcard patterns ("*", "MESSAGE_*"). */
  events?: string[];
  enabled?: boolean;
  signatureScheme?: SignatureScheme;
  payloadFormat?: PayloadFormat;
  traceContext?: boolean;
  roomIds?: number[] | null;
  /** Names lower-cased; null or {} clears them. */
  headers?: Record<string, string> | null;
  maxDeliveriesPerSecond?: number | null;
  ordering?: Ordering;
}

export const MAX_HEADERS = 10;
export const HEADER_VALUE_MAX_BYTES = 1024;
/** RFC 9110 token characters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII, space and tab: no control characters, so no header injection. */
const PRINTABLE = /^[\t\x20-\x7e]*$/;

export const NAME_MAX_CHARS = 200;
export const SECRET_MIN_CHARS = 16;
export const SECRET_MAX_CHARS = 1024;
/** Bounds of the key a `whsec_` secret encodes: 192 to 512 bits (32 bytes are generated). */
export const WHSEC_KEY_MIN_BYTES = 24;
export const WHSEC_KEY_MAX_BYTES = 64;
/** Longer URLs are refused by many proxies and servers; a receiver URL never needs more. */
export const URL_MAX_CHARS = 2048;

/** Characters as a person counts them (code points), not UTF-16 units. */
function charCount(text: string): number {
  return [...text].length;
}

/**
 * Checks the given fields, each failure with its own code (the tables of docs/webhooks.md,
 * "Endpoint fields" and "Operating endpoints"), and returns them normalized. Only given fields are checked, so the same function serves create and update.
 * Messages never echo the secret.
 */
export function validateEndpointInput(input: EndpointInput, policy: UrlPolicy): ValidEndpointInput {
  const valid: ValidEndpointInput = {};

  if (input.name !== undefined) {
    const name = input.name.trim();
    if (name === "" || charCount(name) > NAME_MAX_CHARS) {
      throw new AppError(
        "invalid_name",
        `name must be 1 to ${NAME_MAX_CHARS} characters, not blank`,
        {
          field: "body.name",
        },
      );
    }
    valid.name = name;
  }

  if (input.url !== undefined) {
    const raw = input.url.trim();
    if (raw.length > URL_MAX_CHARS) {
      throw new AppError("invalid_url", `url must be at most ${URL_MAX_CHARS} characters`, {
        field: "body.url",
      });
    }
    const check = checkWebhookUrl(raw, policy);
    if (!check.ok) throw new AppError(check.code, check.message, { field: "body.url" });
    // Stored as written (not re-serialized), so the admin sees back what they entered.
    valid.url = raw;
  }

  if (input.secret !== undefined) valid.secret = validateSecret(input.secret);

  if (input.events !== undefined) valid.events = validateEvents(input.events);

  if (input.enabled !== undefined) valid.enabled = input.enabled;
  if (input.signatureScheme !== undefined) valid.signatureScheme = input.signatureScheme;
  if (input.payloadFormat !== undefined) valid.payloadFormat = input.payloadFormat;
  if (input.traceContext !== undefined) valid.traceContext = input.traceContext;
  if (input.roomIds !== undefined) valid.roomIds = validateRoomIds(input.roomIds);
  if (input.headers !== undefined) valid.headers = validateHeaders(input.headers);
  if (input.maxDeliveriesPerSecond !== undefined)
    valid.maxDeliveriesPerSecond = input.maxDeliveriesPerSecond;
  // The body schema admits only "none", "room" and "endpoint" (400 validation_failed otherwise).
  if (input.ordering !== undefined) valid.ordering = input.ordering;
  return valid;
}

/**
 * Checks a secret given on create, `PATCH` or rotate-secret: 16 to 1024 characters, and a secret
 * starting with `whsec_` must be Standard Webhooks' format, `whsec_` + strict base64 of a 24 to
 * 64 byte key (docs/webhooks.md, "Endpoint fields"), which is what the `standardwebhooks`
 * libraries read. Anything else would be signed with the few bytes a lenient decoder keeps, or
 * none. The message never echoes the secret.
 */
export function validateSecret(secret: string): string {
  const length = charCount(secret);
  if (length < SECRET_MIN_CHARS || length > SECRET_MAX_CHARS) {
    throw new AppError(
      "invalid_secret",
      `secret must be ${SECRET_MIN_CHARS} to ${SECRET_MAX_CHARS} characters (got ${length})`,
      { field: "body.secret" },
    );
  }
  if (secret.startsWith(WHSEC_PREFIX)) {
    const key = decodeWhsecSecret(secret, "base64");
    if (key === undefined) {
      throw new AppError(
        "invalid_secret",
        `a secret starting with ${WHSEC_PREFIX} must go on in strict base64 (A-Z, a-z, 0-9, + and /, padded with = to a multiple of 4 characters, no URL-safe - or _); this one does not. A secret of your own choosing must not start with ${WHSEC_PREFIX}`,
        { field: "body.secret" },
      );
    }
    if (key.length < WHSEC_KEY_MIN_BYTES || key.length > WHSEC_KEY_MAX_BYTES) {
      throw new AppError(
        "invalid_secret",
        `a ${WHSEC_PREFIX} secret must encode a key of ${WHSEC_KEY_MIN_BYTES} to ${WHSEC_KEY_MAX_BYTES} bytes (got ${key.length})`,
        { field: "body.secret" },
      );
    }
  }
  return secret;
}

function validateRoomIds(roomIds: number[] | null): number[] | null {
  if (roomIds === null) return null;
  if (roomIds.length === 0) {
    throw new AppError("invalid_room_ids", "roomIds must be null or a non-empty list of room ids", {
      field: "body.roomIds",
    });
  }
  const unique = [...new Set(roomIds)];
  if (unique.length !== roomIds.length) {
    throw new AppError("invalid_room_ids", "roomIds lists a room twice", { field: "body.roomIds" });
  }
  return unique;
}

function validateHeaders(headers: Record<string, string> | null): Record<string, string> | null {
  if (headers === null) return null;
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) {
    throw new AppError("invalid_header", `at most ${MAX_HEADERS} headers`, {
      field: "body.headers",
    });
  }
  const out: Record<string, string> = {};
  for (const [rawName, value] of entries) {
    const shown = rawName.length <= 64 ? `"${rawName}"` : "a header name";
    if (!TOKEN.test(rawName)) {
      throw new AppError("invalid_header", `${shown} is not a valid header name`, {
        field: "body.headers",
      });
    }
    const name = rawName.toLowerCase();
    const reserved = whyHeaderIsReserved(name);
    if (reserved !== undefined) {
      throw new AppError("header_reserved", `${shown} ${reserved}`, {
        field: "body.headers",
        header: rawName,
      });
    }
    if (Object.hasOwn(out, name)) {
      throw new AppError("invalid_header", `${shown} is given twice`, { field: "body.headers" });
    }
    // Values are secrets (API keys, basic auth): never echoed.
    if (!PRINTABLE.test(value) || Buffer.byteLength(value, "utf8") > HEADER_VALUE_MAX_BYTES) {
      throw new AppError(
        "invalid_header",
        `the value of ${shown} must be printable ASCII of at most ${HEADER_VALUE_MAX_BYTES} bytes`,
        { field: "body.headers", header: rawName },
      );
    }
    out[name] = value;
  }
  return out;
}

function validateEvents(events: string[]): string[] {
  if (events.length === 0) {
    throw new AppError("invalid_events", "events must list at least one event name", {
      field: "body.events",
    });
  }
  const seen = new Set<string>();
  for (const event of events) {
    if (event === WEBHOOK_TEST) {
      throw new AppError(
        "invalid_events",
        `${WEBHOOK_TEST} cannot be subscribed to; POST /api/admin/webhooks/{id}/test sends it`,
        { field: "body.events", event },
      );
    }
    if (isEventPattern(event)) {
      if (eventsMatching(event).length === 0) {
        const shown = event.length <= 64 ? `"${event}"` : "an entry";
        throw new AppError("invalid_events", `${shown} matches no event`, {
          field: "body.events",
        });
      }
    } else if (!isEventName(event)) {
      // A long unknown name is not echoed in full: the problem body stays small.
      const shown = event.length <= 64 ? `"${event}"` : "an entry";
      throw new AppError("invalid_events", `${shown} is not a known event name`, {
        field: "body.events",
      });
    }
    if (seen.has(event)) {
      throw new AppError("invalid_events", `"${event}" is listed twice`, {
        field: "body.events",
        event,
      });
    }
    seen.add(event);
  }
  return events;
}
