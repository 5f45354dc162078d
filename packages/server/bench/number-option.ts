/** A numeric command-line option: the value given, or the benchmark's default when none was. */
export function numberOption(value: string | undefined, fallback: number): number {
  return value === undefined ? fallback : Number(value);
}
