/**
 * Rows as aligned columns under upper-case headings, for people; `--json` prints the data itself
 * for scripts. With `maxWidth` (the terminal's width), the widest columns are cut, each cell
 * ending in `…`, until every line fits; no column goes below its heading or 6 characters.
 */
export function formatTable<T>(
  rows: readonly T[],
  columns: ReadonlyArray<readonly [heading: string, cell: (row: T) => unknown]>,
  maxWidth?: number,
): string[] {
  const cells = rows.map((row) => columns.map(([, cell]) => show(cell(row))));
  const headings = columns.map(([heading]) => heading.toUpperCase());
  const widths = headings.map((heading, i) =>
    Math.max(heading.length, ...cells.map((line) => line[i]!.length)),
  );
  if (maxWidth !== undefined) fit(widths, headings, maxWidth);
  const line = (values: string[]) =>
    values
      .map((value, i) => {
        const cut = value.length > widths[i]! ? `${value.slice(0, widths[i]! - 1)}…` : value;
        return i === values.length - 1 ? cut : cut.padEnd(widths[i]!);
      })
      .join("  ")
      .trimEnd();
  return [line(headings), ...cells.map(line)];
}

const GAP = 2;
const MIN_COLUMN = 6;

function fit(widths: number[], headings: string[], maxWidth: number): void {
  const floor = headings.map((heading) => Math.max(heading.length, MIN_COLUMN));
  let total = widths.reduce((sum, width) => sum + width, 0) + GAP * (widths.length - 1);
  while (total > maxWidth) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) {
      if (widths[i]! > floor[i]! && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    }
    if (widest < 0) return; // as narrow as it gets: let the terminal wrap
    widths[widest]!--;
    total--;
  }
}

function show(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return value.join(",");
  return String(value).replace(/\s+/g, " ");
}

export function printJson(out: (line: string) => void, value: unknown): void {
  out(JSON.stringify(value, null, 2));
}
