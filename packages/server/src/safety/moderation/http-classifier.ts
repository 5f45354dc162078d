import { request } from "undici";
import type { ModerationClassifier, ModerationResult } from "./moderation-classifier.js";
import { ModerationUnavailableError } from "./moderation-unavailable-error.js";

const NAME = "http";
const DEFAULT_TIMEOUT_MS = 10_000;

export interface HttpClassifierOptions {
  url: string;
  apiKey?: string;
  timeoutMs?: number;
  model?: string;
}

// "self-harm/intent" -> "self_harm_intent", so categories read the same as the local classifier's.
function normaliseCategory(key: string): string {
  return key.toLowerCase().replace(/[/-]/g, "_");
}

function strongestCategory(body: unknown): ModerationResult | null {
  const scores = (body as { results?: { category_scores?: unknown }[] } | null)?.results?.[0]
    ?.category_scores;
  if (typeof scores !== "object" || scores === null || Array.isArray(scores)) return null;
  let best: ModerationResult = { category: "none", score: 0 };
  for (const [key, score] of Object.entries(scores)) {
    if (typeof score !== "number" || !Number.isFinite(score) || score < 0 || score > 1) {
      return null;
    }
    if (score > best.score) best = { category: normaliseCategory(key), score };
  }
  return best;
}

/**
 * A classifier that calls an OpenAI-moderations-compatible endpoint: POST `{input, model?}`,
 * answer `{results: [{category_scores: {...}}]}`. The highest category score is the result.
 */
export function createHttpClassifier(options: HttpClassifierOptions): ModerationClassifier {
  const endpoint = new URL(options.url);
  // Never put the key (nor credentials or a query string that may hold one) in an error.
  const where = `${endpoint.origin}${endpoint.pathname}`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  const unavailable = (reason: string, cause?: unknown) =>
    new ModerationUnavailableError(
      NAME,
      `${where}: ${reason}`,
      cause === undefined ? {} : { cause },
    );
  const transportFailure = (error: unknown) => {
    const name = (error as Error).name;
    return name === "TimeoutError" || name === "AbortError"
      ? unavailable(`no answer within ${timeoutMs} ms`, error)
      : unavailable(`request failed: ${(error as Error).message}`, error);
  };

  return {
    name: NAME,
    async classify(text) {
      const payload =
        options.model === undefined ? { input: text } : { input: text, model: options.model };
      // One deadline for connecting, the headers and the body.
      const signal = AbortSignal.timeout(timeoutMs);
      let raw: string;
      try {
        const response = await request(endpoint, {
          method: "POST",
          headers,
          body: JSON.stringify(payload),
          signal,
        });
        if (response.statusCode < 200 || response.statusCode > 299) {
          await response.body.dump();
          throw unavailable(`answered HTTP ${response.statusCode}`);
        }
        raw = await response.body.text();
      } catch (error) {
        throw error instanceof ModerationUnavailableError ? error : transportFailure(error);
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch (error) {
        throw unavailable("answered with a body that is not JSON", error);
      }
      const result = strongestCategory(body);
      if (result === null) {
        throw unavailable("answer has no results[0].category_scores of numbers in [0, 1]");
      }
      return result;
    },
  };
}
