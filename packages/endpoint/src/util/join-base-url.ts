// A scheme followed by "//": http://, https://, ws://, ...
const ABSOLUTE = /^[A-Za-z][A-Za-z\d+.-]*:\/\//;

/** An absolute url as it is; a relative one after `baseUrl`, with one slash where both have one. */
export function joinBaseUrl(baseUrl: unknown, url: string): string {
  if (ABSOLUTE.test(url) || baseUrl === undefined || baseUrl === null) return url;
  const base = String(baseUrl);
  return base.endsWith("/") && url.startsWith("/") ? base + url.slice(1) : base + url;
}
