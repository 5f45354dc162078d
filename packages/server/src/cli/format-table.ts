/**
 * Rows as aligned columns under upper-case headings, for people; `--json` prints the data itself
 * for scripts.
 */
export function formatTable<T>(
  rows: readonly T[],
  columns: ReadonlyArray<readonly [heading: string, cell: (row: T) => unknown]>,
): string[] {
  const cells = rows.map((row) => columns.map(([, cell]) => show(cell(row))));
  const headings = columns.map(([heading]) => heading.toUpperCase());
  const widths = headings.map((heading, i) =>
    Math.max(heading.length, ...cells.map((line) => line[i]!.length)),
  );
  const line = (values: string[]) =>
    values
      .map((value, i) => (i === values.length - 1 ? value : value.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(headings), ...cells.map(line)];
}

function show(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return value.join(",");
  return String(value);
}

export function printJson(out: (line: string) => void, value: unknown): void {
  out(JSON.stringify(value, null, 2));
}
