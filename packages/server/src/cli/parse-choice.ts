import { EVENT_NAMES } from "@parley/client";
import type { EventSubscription } from "@parley/client/wire";
import { eventsMatching } from "../events/event-subscriptions.js";
import { CliError } from "./cli-error.js";

/**
 * One of `allowed`, matched without regard to case (`--status success` means SUCCESS); anything
 * else is refused with the list of allowed values.
 */
export function parseChoice<T extends string>(
  value: string,
  allowed: readonly T[],
  what: string,
): T {
  const found = allowed.find((choice) => choice.toLowerCase() === value.trim().toLowerCase());
  if (found === undefined)
    throw new CliError(`${what} must be one of ${allowed.join(", ")}; got "${value}"`);
  return found;
}

/**
 * `--events` values: comma-separated, repeatable, each a known event name (in any case), `*`
 * (every event, later ones included) or a prefix wildcard such as `MESSAGE_*` that covers at least
 * one event; duplicates are dropped.
 */
export function parseEvents(values: readonly string[]): EventSubscription[] {
  const events = values
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter(Boolean)
    .map((value): EventSubscription => {
      if (!value.endsWith("*")) return parseChoice(value, EVENT_NAMES, "--events");
      const pattern = value.toUpperCase();
      if (pattern !== "*" && eventsMatching(pattern).length === 0)
        throw new CliError(
          `--events: ${value} matches no event; a wildcard is * or a prefix of event names such as MESSAGE_*`,
        );
      return pattern as EventSubscription;
    });
  if (events.length === 0) throw new CliError("--events must name at least one event");
  return [...new Set(events)];
}
