/**
 * The exit status of every `parley` command, by cause, so that scripts can tell a typo from a
 * missing endpoint from a server that is down. Documented in `parley --help` (EXIT_CODES_HELP) and
 * in docs/cli.md.
 */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** The command ran, but what it checked did not succeed (`--wait`: the delivery failed). */
  failed: 1,
  /** Usage: an unknown command or flag, a missing or bad value, PARLEY_TOKEN not set. */
  usage: 2,
  /** Not found: the API answered 404 (no such endpoint, delivery, user, event...). */
  notFound: 3,
  /** Refused: the API answered another 4xx (invalid input, bad token, forbidden, conflict, 429). */
  refused: 4,
  /** Server or network: a 5xx answer, no answer at all, or a time-out. */
  unavailable: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code of an API answer's HTTP status. */
export function exitCodeOfStatus(status: number): ExitCode {
  if (status === 404) return EXIT.notFound;
  if (status >= 400 && status < 500) return EXIT.refused;
  return EXIT.unavailable;
}

export const EXIT_CODES_HELP = `
Exit codes:
  0  done
  1  the command ran, but what it checked did not succeed (--wait: the delivery failed)
  2  usage: unknown command or flag, missing or bad value, PARLEY_TOKEN not set
  3  not found: the API answered 404
  4  refused: the API answered another 4xx (invalid input, bad token, forbidden, conflict, 429)
  5  server or network: a 5xx answer, no answer, or a time-out
With --json, a failure prints {"error": {"code", "message"}} on stdout instead of a line on stderr.`;
