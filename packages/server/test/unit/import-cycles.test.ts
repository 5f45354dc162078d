import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * No import cycle in packages/server/src, type imports included: a module of a cycle cannot be
 * read (or loaded) on its own. Relative imports only; `x.js` names `x.ts`.
 */
const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");

function sourceFiles(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [path.relative(SRC, full).split(path.sep).join("/")] : [];
  });
}

/** The files `source` (at `file`) imports or re-exports, relative to src/. */
export function importedFiles(file: string, source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const found = new Set<string>();
  for (const m of code.matchAll(
    /\b(?:import|export)\s+(?:type\s+)?[^;]*?\s*from\s*["'](\.[^"']+)["']|\bimport\s*\(\s*["'](\.[^"']+)["']\s*\)|^\s*import\s+["'](\.[^"']+)["']/gm,
  )) {
    const from = (m[1] ?? m[2] ?? m[3])!;
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), from));
    found.add(resolved.replace(/\.js$/, ".ts"));
  }
  return [...found];
}

/** Every cycle found by a depth-first walk, each as the files around it. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      const seen = state.get(next);
      if (seen === "open") cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (seen === undefined) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return cycles;
}

describe("imports in packages/server/src", () => {
  it("form no cycle", () => {
    const files = sourceFiles();
    expect(files).toContain("db/unit-of-work.ts");
    const graph = new Map(
      files.map((file) => [
        file,
        importedFiles(file, fs.readFileSync(path.join(SRC, file), "utf8")),
      ]),
    );
    expect(cyclesOf(graph).map((cycle) => cycle.join(" -> "))).toEqual([]);
  });

  it("catches what it is meant to catch", () => {
    expect(
      importedFiles(
        "db/unit-of-work.ts",
        [
          'import type { A } from "../events/event-spine.js";',
          '// import { B } from "./commented.js";',
          'export { C } from "./c.js";',
          'import { sql } from "kysely";',
        ].join("\n"),
      ),
    ).toEqual(["events/event-spine.ts", "db/c.ts"]);
    const graph = new Map([
      ["db/unit-of-work.ts", ["events/event-spine.ts"]],
      ["events/event-spine.ts", ["db/unit-of-work.ts"]],
      ["events/outbox.ts", []],
    ]);
    expect(cyclesOf(graph)).toEqual([
      ["db/unit-of-work.ts", "events/event-spine.ts", "db/unit-of-work.ts"],
    ]);
  });
});
