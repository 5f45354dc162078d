import { AppError } from "../../errors/app-error.js";
import { isEventName, WEBHOOK_TEST, type EventName } from "../../events/event-catalogue.js";
import { checkWebhookUrl, type UrlPolicy } from "./ssrf-guard.js";

/** Fields of an endpoint as an admin sends them (create: all but `enabled`; update: any). */
export interface EndpointInput {
  name?: string | undefined;
  url?: string | undefined;
  secret?: string | undefined;
  events?: string[] | undefined;
  enabled?: boolean | undefined;
}

/** The same fields once checked: only those given are present. */
export interface ValidEndpointInput {
  name?: string;
  url?: string;
  secret?: string;
  events?: EventName[];
  enabled?: boolean;
}

export const NAME_MAX_CHARS = 200;
export const SECRET_MIN_CHARS = 16;
export const SECRET_MAX_CHARS = 1024;
/** Longer URLs are refused by many proxies and servers; a receiver URL never needs more. */
export const URL_MAX_CHARS = 2048;

/** Characters as a person counts them (code points), not UTF-16 units. */
function charCount(text: string): number {
  return [...text].length;
}

/**
 * Checks the given fields, each failure with its own code (DESIGN section 6), and returns them
 * normalized. Only given fields are checked, so the same function serves create and update.
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

  if (input.secret !== undefined) {
    const length = charCount(input.secret);
    if (length < SECRET_MIN_CHARS || length > SECRET_MAX_CHARS) {
      throw new AppError(
        "invalid_secret",
        `secret must be ${SECRET_MIN_CHARS} to ${SECRET_MAX_CHARS} characters (got ${length})`,
        { field: "body.secret" },
      );
    }
    valid.secret = input.secret;
  }

  if (input.events !== undefined) valid.events = validateEvents(input.events);

  if (input.enabled !== undefined) valid.enabled = input.enabled;
  return valid;
}

function validateEvents(events: string[]): EventName[] {
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
    if (!isEventName(event)) {
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
  return events as EventName[];
}
