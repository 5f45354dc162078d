/**
 * How a custom header's value is shown (API answers, the attempt log): "****" and its last 4
 * characters; a value of 4 characters or fewer is masked whole.
 */
export function maskHeaderValue(value: string): string {
  return value.length > 4 ? `****${value.slice(-4)}` : "****";
}
