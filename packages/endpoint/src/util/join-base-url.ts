/** `baseUrl` followed by a relative url, with one slash where both have one. */
export function joinBaseUrl(baseUrl: unknown, url: string): string {
  if (baseUrl === undefined || baseUrl === null) return url;
  const base = typeof baseUrl === "string" ? baseUrl : String(baseUrl);
  return base.endsWith("/") && url.startsWith("/") ? base + url.slice(1) : base + url;
}
