/**
 * A fresh header object: `defaults` (names already lowercase) with `given` laid over it, names
 * lowercased so `Accept` replaces `accept`. Undefined values are skipped; null is kept.
 */
export function mergeHeaders(defaults: unknown, given: unknown): Record<string, unknown> {
  // Object.assign, not a spread: V8 adds properties slowly to a spread copy of a non-frozen object.
  const headers = Object.assign({}, defaults) as Record<string, unknown>;
  if (typeof given === "object" && given !== null) {
    for (const name of Object.keys(given)) {
      const value = (given as Record<string, unknown>)[name];
      if (value !== undefined) headers[name.toLowerCase()] = value;
    }
  }
  return headers;
}
