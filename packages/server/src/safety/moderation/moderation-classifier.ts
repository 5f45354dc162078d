/** The strongest finding of a classifier: category `"none"` with score 0 when nothing is found. */
export interface ModerationResult {
  category: string;
  /** Confidence in [0, 1]. */
  score: number;
}

/** Scores message text. `classify` rejects with ModerationUnavailableError when it cannot decide. */
export interface ModerationClassifier {
  readonly name: string;
  classify(text: string): Promise<ModerationResult>;
}
