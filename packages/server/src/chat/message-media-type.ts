/**
 * The representations of a fetched message, picked by the `Accept` header the way GitHub's media
 * types work: `application/vnd.parley.v3.<format>+json`. `json` is the default (content as stored).
 */
export type MessageFormat = "json" | "raw" | "text" | "html" | "full";

const VENDOR = /^application\/vnd\.parley(?:\.v3)?(?:\.(raw|text|html|full))?\+json$/;

interface MediaRange {
  type: string;
  q: number;
}

function parseAccept(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of accept.split(",")) {
    const [type = "", ...params] = part.split(";").map((piece) => piece.trim());
    if (type === "") continue;
    let q = 1;
    for (const param of params) {
      const match = /^q\s*=\s*([0-9.]+)$/i.exec(param);
      if (match) q = Number(match[1]);
    }
    if (Number.isFinite(q) && q > 0) ranges.push({ type: type.toLowerCase(), q });
  }
  // Array.prototype.sort is stable: equal q keeps the client's order.
  return ranges.sort((a, b) => b.q - a.q);
}

function formatOf(type: string): MessageFormat | undefined {
  if (type === "application/json" || type === "application/*" || type === "*/*") return "json";
  const vendor = VENDOR.exec(type);
  if (vendor) return (vendor[1] as MessageFormat | undefined) ?? "json";
  return undefined;
}

/**
 * The format the client asked for. A missing header, `*\/*`, or a header naming nothing Parley
 * knows (another vendor, another version) gets the default representation rather than 406, as
 * GitHub does: the answer is always JSON, and `X-Parley-Media-Type` says which one was chosen.
 */
export function pickMessageFormat(accept: string | undefined): MessageFormat {
  if (!accept) return "json";
  for (const range of parseAccept(accept)) {
    const format = formatOf(range.type);
    if (format) return format;
  }
  return "json";
}

/** The `X-Parley-Media-Type` header value for a format, e.g. `parley.v3; format=full`. */
export function mediaTypeHeader(format: MessageFormat): string {
  return `parley.v3; format=${format}`;
}
