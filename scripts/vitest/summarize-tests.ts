/**
 * What a test run proves, in a few lines: how many tests ran per database, per suite and per
 * outside service, and every skipped test with the reason. Shared by the run's reporter
 * (run-summary-reporter.ts) and by scripts/test-summary.ts, which reads vitest's JSON report in CI.
 */
import path from "node:path";
import { TEST_SERVICES } from "../../packages/server/test/helpers/services.js";

export interface TestOutcome {
  /** The test file, relative to the repository root. */
  file: string;
  /** Suites and test name, joined with " > ". */
  name: string;
  tags: readonly string[];
  state: "passed" | "failed" | "skipped";
}

export interface RunSummary {
  lines: string[];
  passed: number;
  failed: number;
  skipped: number;
}

const DATABASES = ["sqlite", "postgres"];

/** "server/integration" for packages/server/test/integration/..., "client" for packages/client/test/x.test.ts. */
export function suiteOf(file: string): string {
  const parts = file.split(/[\\/]/);
  const at = parts.indexOf("test");
  if (at < 0) return path.dirname(file);
  const owner = parts[at - 1] ?? "";
  const below = parts.slice(at + 1, -1);
  return below.length > 0 ? `${owner}/${below[0]}` : owner;
}

function countBy(outcomes: readonly TestOutcome[], key: (o: TestOutcome) => string[]) {
  const counts = new Map<string, { ran: number; skipped: number }>();
  for (const outcome of outcomes) {
    for (const k of key(outcome)) {
      const entry = counts.get(k) ?? { ran: 0, skipped: 0 };
      if (outcome.state === "skipped") entry.skipped++;
      else entry.ran++;
      counts.set(k, entry);
    }
  }
  return counts;
}

function formatCounts(counts: Map<string, { ran: number; skipped: number }>, order?: string[]) {
  const keys = order ?? [...counts.keys()].sort();
  return keys
    .map((key) => {
      const { ran, skipped } = counts.get(key) ?? { ran: 0, skipped: 0 };
      return skipped > 0 ? `${key} ${ran} (${skipped} skipped)` : `${key} ${ran}`;
    })
    .join(" · ");
}

export function summarizeTests(outcomes: readonly TestOutcome[]): RunSummary {
  const passed = outcomes.filter((o) => o.state === "passed").length;
  const failed = outcomes.filter((o) => o.state === "failed").length;
  const skipped = outcomes.filter((o) => o.state === "skipped");
  const lines = [
    `tests: ${passed} passed, ${failed} failed, ${skipped.length} skipped`,
    `ran per database: ${formatCounts(
      countBy(outcomes, (o) => o.tags.filter((t) => DATABASES.includes(t))),
      DATABASES,
    )}`,
    `ran per suite: ${formatCounts(countBy(outcomes, (o) => [suiteOf(o.file)]))}`,
    `ran per service: ${formatCounts(
      countBy(outcomes, (o) => [...o.tags]),
      TEST_SERVICES.map((s) => s.tag),
    )}`,
  ];

  if (skipped.length > 0) {
    lines.push(`skipped: ${skipped.length}`);
    const unexplained: TestOutcome[] = [];
    const byService = new Map<string, TestOutcome[]>();
    for (const outcome of skipped) {
      const service = TEST_SERVICES.find((s) => outcome.tags.includes(s.tag) && s.missing());
      if (service === undefined) unexplained.push(outcome);
      else byService.set(service.tag, [...(byService.get(service.tag) ?? []), outcome]);
    }
    for (const service of TEST_SERVICES) {
      const tests = byService.get(service.tag);
      if (tests === undefined) continue;
      const files = new Set(tests.map((t) => t.file)).size;
      lines.push(
        `  ${tests.length} in ${files} file(s) need ${service.description}: ${service.missing()}`,
      );
    }
    for (const outcome of unexplained) lines.push(`  ${outcome.file} > ${outcome.name}`);
  }
  return { lines, passed, failed, skipped: skipped.length };
}
