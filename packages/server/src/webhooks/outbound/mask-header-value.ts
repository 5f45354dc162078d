/**
 * How a custom header's value is shown (API answers, the attempt log): "****" and at most its last
 * 4 characters, never more than a third of the value (5 characters show 1, 6 show 2, 12 and more
 * show 4); a value of 4 characters or fewer is masked whole.
 */
export function maskHeaderValue(value: string): string {
  const shown = value.length <= 4 ? 0 : Math.min(4, Math.floor(value.length / 3));
  return shown === 0 ? "****" : `****${value.slice(-shown)}`;
}
