const SUFFIX = "-preview";

/** `"mercy-preview"` to `"mercy"`; names are accepted with or without the suffix. */
export function stripPreviewSuffix(name: string): string {
  return name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : name;
}
