import type { AttemptOutcome } from "../transport/webhook-sender.js";

/** The challenge of a frozen WEBHOOK_VERIFICATION envelope (`data.challenge`). */
export function challengeOf(frozen: string): string | undefined {
  try {
    const challenge = (JSON.parse(frozen) as { data?: { challenge?: unknown } }).data?.challenge;
    return typeof challenge === "string" && challenge !== "" ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether an answer's body holds the challenge, as docs/webhooks.md ("Ownership check") asks:
 * the challenge as plain text (surrounding white space aside), or a JSON object whose
 * `challenge` is it. Anything else, a body merely containing it included, does not: a receiver
 * that echoes whatever it gets must not pass.
 */
export function answerHoldsChallenge(body: string | null, challenge: string): boolean {
  if (body === null) return false;
  const text = body.trim();
  if (text === challenge) return true;
  try {
    const parsed = JSON.parse(text) as unknown;
    return (
      typeof parsed === "object" &&
      parsed !== null &&
      (parsed as { challenge?: unknown }).challenge === challenge
    );
  } catch {
    return false;
  }
}

/**
 * A challenge's attempt as recorded: a 2xx answer without the challenge is a failed attempt
 * (retried like any delivery), with an error saying what was missing.
 */
export function judgeChallengeAnswer(
  outcome: AttemptOutcome,
  challenge: string | undefined,
): { outcome: AttemptOutcome; verified: boolean } {
  if (!outcome.ok) return { outcome, verified: false };
  if (challenge !== undefined && answerHoldsChallenge(outcome.responseBody, challenge))
    return { outcome, verified: true };
  return {
    verified: false,
    outcome: {
      ...outcome,
      ok: false,
      error:
        'the receiver answered 2xx without the challenge: answer with data.challenge as the body, or {"challenge": "..."}',
    },
  };
}
