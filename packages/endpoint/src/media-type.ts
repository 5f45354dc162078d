// The `mediaType` option: merging it over the defaults' and applying it to the accept header.
import { BoundedCache } from "./bounded-cache.js";
import type { MediaType } from "./types.js";

/** The vendor named in media types when the accept header in effect names none. */
export const DEFAULT_VENDOR = "parley";

const PREVIEW_SUFFIX = "-preview";

/** Earlier names first, then later ones; `-preview` suffixes stripped, duplicates and non-strings dropped. */
function mergePreviews(earlier: readonly unknown[], later: readonly unknown[]): string[] {
  const merged: string[] = [];
  for (const list of [earlier, later]) {
    for (const name of list) {
      if (typeof name !== "string") continue;
      // Names are accepted with or without the suffix: "mercy-preview" is "mercy".
      const stripped = name.endsWith(PREVIEW_SUFFIX) ? name.slice(0, -PREVIEW_SUFFIX.length) : name;
      if (stripped !== "" && !merged.includes(stripped)) merged.push(stripped);
    }
  }
  return merged;
}

/**
 * The call's `mediaType` over the defaults': a defined `format` replaces, `previews` accumulate.
 * `previews` is the defaults' own array when the call adds none: copy it before handing it out.
 */
export function mergeMediaType(
  defaults: unknown,
  given: unknown,
): { format: unknown; previews: readonly unknown[] } {
  const base = (typeof defaults === "object" && defaults !== null ? defaults : {}) as MediaType;
  let format: unknown = base.format ?? "";
  let previews: readonly unknown[] = Array.isArray(base.previews) ? base.previews : [];
  if (typeof given === "object" && given !== null) {
    const mediaType = given as MediaType;
    if (mediaType.format !== undefined) format = mediaType.format;
    if (Array.isArray(mediaType.previews)) previews = mergePreviews(previews, mediaType.previews);
  }
  return { format, previews };
}

// application/vnd.<vendor>[.<version> | .<name>-preview][.<format>][+json]
const VENDOR_ENTRY =
  /^(\s*)application\/vnd\.([\w-]+?)((?:\.v\d+|\.[\w-]+-preview)?)(?:\.[\w-]+)?(?:\+json)?(\s*)$/i;
const VENDOR = /application\/vnd\.([\w-]+?)(?=[.+]|\s*(?:,|$))/i;
const PREVIEW_NAMES = /(?<![\w-])[\w-]+(?=-preview)/g;
// A binary upload or download must keep its media type whatever the defaults say.
const BINARY = /application\/octet-stream/i;

// accept header -> (format + previews) -> amended header; the inner key is the format itself in the
// usual case without previews, so no key string is built per call.
const cache = new BoundedCache<BoundedCache<string>>(100);

function amend(accept: string, format: string, previews: readonly string[]): string {
  if (BINARY.test(accept)) return accept;
  if (previews.length > 0) {
    const vendor = VENDOR.exec(accept)?.[1] ?? DEFAULT_VENDOR;
    const suffix = format === "" ? "+json" : `.${format}`;
    // Previews already named in the accept header are kept, ahead of the requested ones.
    return mergePreviews(accept.match(PREVIEW_NAMES) ?? [], previews)
      .map((name) => `application/vnd.${vendor}.${name}-preview${suffix}`)
      .join(",");
  }
  return accept
    .split(",")
    .map((entry) => {
      const match = VENDOR_ENTRY.exec(entry);
      if (match === null) return entry;
      const [, leading, vendor, version, trailing] = match;
      return `${leading}application/vnd.${vendor}${version}.${format}${trailing}`;
    })
    .join(",");
}

/**
 * Applies `mediaType` to an accept header. `format` replaces the format of each vendor entry
 * (`application/vnd.parley.v3+json` + `raw` = `application/vnd.parley.v3.raw`); other entries stay.
 * `previews` (on every url) turn the header into one preview entry per name, under the vendor the
 * header names (`parley` when it names none). Cached: the combinations in use are few.
 */
export function amendAcceptHeader(
  accept: string,
  format: string,
  previews: readonly string[],
): string {
  const amended = cache.get(accept) ?? cache.set(accept, new BoundedCache<string>(100));
  const key = previews.length === 0 ? format : `${format}\n${previews.join(",")}`;
  return amended.get(key) ?? amended.set(key, amend(accept, format, previews));
}
