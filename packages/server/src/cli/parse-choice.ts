import { EVENT_NAMES, type EventName } from "@parley/client";
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

/** `--events` values: comma-separated, repeatable, each a known event name. */
export function parseEvents(values: readonly string[]): EventName[] {
  return values
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter(Boolean)
    .map((value) => parseChoice(value, EVENT_NAMES, "--events"));
}
