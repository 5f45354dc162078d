/**
 * The scanner could not give a verdict (unreachable, timed out, or it reported an error). The
 * caller must not treat this as clean: uploads fail closed.
 */
export class AntivirusUnavailableError extends Error {
  readonly code = "antivirus_unavailable";
  readonly scanner: string;

  constructor(scanner: string, reason: string, options?: { cause?: unknown }) {
    super(`antivirus scanner ${scanner} unavailable: ${reason}`, options);
    this.name = "AntivirusUnavailableError";
    this.scanner = scanner;
  }
}
