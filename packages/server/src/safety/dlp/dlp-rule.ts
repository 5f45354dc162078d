/** A named check for data that must not be posted. `matches` is pure and stateless. */
export interface DlpRule {
  id: string;
  description: string;
  matches(text: string): boolean;
}

/** Which rule blocked a message; never carries the matched text. */
export interface DlpMatch {
  ruleId: string;
  description: string;
}
