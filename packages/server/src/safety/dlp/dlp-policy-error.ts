/** The DLP policy file cannot be used; the message names the file and what is wrong with it. */
export class DlpPolicyError extends Error {
  readonly code = "invalid_dlp_policy";
  readonly file: string;

  constructor(file: string, problem: string, options?: { cause?: unknown }) {
    super(`DLP policy file ${file}: ${problem}`, options);
    this.name = "DlpPolicyError";
    this.file = file;
  }
}
