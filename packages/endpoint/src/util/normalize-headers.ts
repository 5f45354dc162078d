/**
 * A fresh header object: names lowercased (a later `Accept` replaces an earlier `accept`), values
 * as strings, `undefined` and `null` left out.
 */
export function normalizeHeaders(headers: unknown): Record<string, string> {
  // Built key by key on purpose: V8 adds properties (content-type, later) slowly to an object
  // made by spreading a non-frozen one.
  const normalized: Record<string, string> = {};
  if (typeof headers !== "object" || headers === null) return normalized;
  for (const name of Object.keys(headers)) {
    const value = (headers as Record<string, unknown>)[name];
    if (value === undefined || value === null) continue;
    normalized[name.toLowerCase()] = typeof value === "string" ? value : String(value);
  }
  return normalized;
}
