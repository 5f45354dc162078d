/**
 * Headers to send: string values under lowercase names, `undefined` and `null` left out. Returns
 * `headers` itself when it already is so (pass only a fresh object you own), else a fresh copy.
 */
export function normalizeHeaders(headers: Record<string, unknown>): Record<string, string> {
  for (const name of Object.keys(headers)) {
    if (typeof headers[name] !== "string" || name.toLowerCase() !== name) return copy(headers);
  }
  return headers as Record<string, string>;
}

function copy(headers: Record<string, unknown>): Record<string, string> {
  const normalized: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined || value === null) continue;
    normalized[name.toLowerCase()] = typeof value === "string" ? value : String(value);
  }
  return normalized;
}
