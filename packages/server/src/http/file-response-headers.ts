/**
 * The headers a file download is served with (docs/security.md, "Files"). Uploads are whatever
 * their uploader made them, so nothing of a file may run in Parley's origin:
 * - only raster images of the types every browser decodes safely (PNG, JPEG, GIF, WebP) are
 *   served `inline`, under their own type, so the chat page can show them; SVG never (it is a
 *   document that runs scripts), nor any other type, whatever its uploader declared: those are
 *   `attachment`, served as `application/octet-stream`, so a browser saves them rather than
 *   rendering them;
 * - `X-Content-Type-Options: nosniff`, so no browser guesses HTML or script from the bytes;
 * - `Content-Security-Policy: sandbox; default-src 'none'` (plus the image itself for inline
 *   images), so a file opened in a tab anyway runs nothing and loads nothing, in an opaque origin;
 * - the name in `Content-Disposition` as RFC 6266 says: a plain ASCII `filename` fallback and the
 *   exact name as `filename*=UTF-8''...` (RFC 8187), so no name can break out of the header.
 */
export const INLINE_IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
]);

export interface ServedFile {
  name: string;
  mediaType: string;
  size: number;
  sha256: string;
}

/** Characters RFC 8187's attr-char allows unencoded; everything else is percent-encoded. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/;

/** `filename*` value: UTF-8, percent-encoded outside attr-char (RFC 8187 section 3.2.1). */
function extendedValue(name: string): string {
  let out = "UTF-8''";
  for (const byte of Buffer.from(name, "utf8")) {
    const char = String.fromCharCode(byte);
    out +=
      byte < 0x80 && ATTR_CHAR.test(char)
        ? char
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * The quoted-string fallback for clients without `filename*`: printable ASCII only (anything else
 * becomes `_`), without `"` or `\` (no escapes, which some clients mishandle), and not `%` (some
 * decode it).
 */
function asciiFallback(name: string): string {
  const ascii = [...name]
    .map((char) => (/^[\x20-\x7e]$/.test(char) && !/["\\%]/.test(char) ? char : "_"))
    .join("");
  return ascii.trim() === "" ? "download" : ascii;
}

export function contentDisposition(type: "inline" | "attachment", name: string): string {
  return `${type}; filename="${asciiFallback(name)}"; filename*=${extendedValue(name)}`;
}

/** The ETag of a file: its content's SHA-256, so equal bytes are equal tags (a strong validator). */
export function fileEtag(file: Pick<ServedFile, "sha256">): string {
  return `"${file.sha256}"`;
}

/** As every other answer's policy (plugins/security-headers.ts): no framing, no base, no forms. */
const LOCKED = "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function fileResponseHeaders(file: ServedFile): Record<string, string> {
  const inline = INLINE_IMAGE_TYPES.has(file.mediaType);
  return {
    "content-type": inline ? file.mediaType : "application/octet-stream",
    "content-length": String(file.size),
    "content-disposition": contentDisposition(inline ? "inline" : "attachment", file.name),
    "x-content-type-options": "nosniff",
    "content-security-policy": inline
      ? `sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; ${LOCKED}`
      : `sandbox; default-src 'none'; ${LOCKED}`,
    // Members only: shared caches must not keep it; the browser revalidates with the ETag.
    "cache-control": "private, no-cache",
    etag: fileEtag(file),
    "cross-origin-resource-policy": "same-origin",
  };
}

/** Whether an If-None-Match header matches `etag` (RFC 9110 section 13.1.2: weak comparison). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === "*") return true;
  return header
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""))
    .includes(etag);
}
