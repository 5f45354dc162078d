/** The moderation provider gave no usable answer (unreachable, timed out, non-2xx, bad JSON). */
export class ModerationUnavailableError extends Error {
  readonly code = "moderation_unavailable";
  readonly classifier: string;

  constructor(classifier: string, reason: string, options?: { cause?: unknown }) {
    super(`moderation classifier ${classifier} unavailable: ${reason}`, options);
    this.name = "ModerationUnavailableError";
    this.classifier = classifier;
  }
}
