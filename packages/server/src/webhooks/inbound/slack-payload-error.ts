/** Slack's own answer codes for a payload it cannot post (`invalid_payload`, `no_text`, ...). */
export type SlackErrorCode = "invalid_payload" | "no_text" | "too_many_attachments";

/** A payload the Slack-compatible route refuses; answered as Slack does: 400 and the bare code. */
export class SlackPayloadError extends Error {
  readonly status = 400;
  constructor(
    readonly code: SlackErrorCode,
    detail: string,
  ) {
    super(detail);
    this.name = "SlackPayloadError";
  }
}
