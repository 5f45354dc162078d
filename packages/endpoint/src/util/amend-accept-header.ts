import { DEFAULT_VENDOR } from "../defaults.js";
import { BoundedCache } from "./bounded-cache.js";
import { mergePreviews } from "./merge-previews.js";

// application/vnd.<vendor>[.<version> | .<name>-preview][.<format>][+json]
const VENDOR_ENTRY =
  /^(\s*)application\/vnd\.([\w-]+?)((?:\.v\d+|\.[\w-]+-preview)?)(?:\.[\w-]+)?(?:\+json)?(\s*)$/i;
const VENDOR = /application\/vnd\.([\w-]+?)(?=[.+]|\s*(?:,|$))/i;
const PREVIEW_NAMES = /(?<![\w-])[\w-]+(?=-preview)/g;
// A binary upload or download must keep its media type whatever the defaults say.
const BINARY = /application\/octet-stream/i;

const cache = new BoundedCache<string>(500);

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
  const key = `${accept}\n${format}\n${previews.join(",")}`;
  return cache.get(key) ?? cache.set(key, amend(accept, format, previews));
}
