/** The SHA-256 block list file cannot be used; the message names the file and, where it applies, the line. */
export class Sha256BlocklistError extends Error {
  readonly code = "invalid_av_blocklist";
  readonly file: string;
  readonly line: number | null;

  constructor(file: string, line: number | null, problem: string, options?: { cause?: unknown }) {
    super(`SHA-256 block list ${file}${line === null ? "" : ` line ${line}`}: ${problem}`, options);
    this.name = "Sha256BlocklistError";
    this.file = file;
    this.line = line;
  }
}
