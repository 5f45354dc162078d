import { stripPreviewSuffix } from "./strip-preview-suffix.js";

/** Earlier names first, then later ones; `-preview` suffixes stripped, duplicates and non-strings dropped. */
export function mergePreviews(earlier: readonly unknown[], later: readonly unknown[]): string[] {
  const merged: string[] = [];
  for (const list of [earlier, later]) {
    for (const name of list) {
      if (typeof name !== "string") continue;
      const stripped = stripPreviewSuffix(name);
      if (stripped !== "" && !merged.includes(stripped)) merged.push(stripped);
    }
  }
  return merged;
}
