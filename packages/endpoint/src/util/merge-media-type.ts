import type { MediaType } from "../types.js";
import { mergePreviews } from "./merge-previews.js";

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
