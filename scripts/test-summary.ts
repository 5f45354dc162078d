/**
 * The summary step of .ci/run: reads vitest's JSON report and prints what the run proved (tests
 * per database, per suite, per outside service) and every skipped test with its reason. Fails
 * when a test failed, when none ran, or (CI=true) when any was skipped.
 *
 *   npx tsx scripts/test-summary.ts test-results/vitest.json
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { IN_CI } from "../packages/server/test/helpers/services.js";
import { summarizeTests, type TestOutcome } from "./vitest/summarize-tests.js";

interface JsonReport {
  testResults: Array<{
    name: string;
    status: string;
    message?: string;
    assertionResults: Array<{
      ancestorTitles: string[];
      title: string;
      status: string;
      tags?: string[];
    }>;
  }>;
}

const file = process.argv[2] ?? "test-results/vitest.json";
const report = JSON.parse(readFileSync(file, "utf8")) as JsonReport;

const outcomes: TestOutcome[] = report.testResults.flatMap((module) =>
  module.assertionResults.map((test) => ({
    file: path.relative(process.cwd(), module.name),
    name: [...test.ancestorTitles, test.title].join(" > "),
    tags: test.tags ?? [],
    state: test.status === "passed" ? "passed" : test.status === "failed" ? "failed" : "skipped",
  })),
);
const summary = summarizeTests(outcomes);
console.log(summary.lines.join("\n"));

// A file can fail without a failed test (an error in a hook, a leak): count those too.
const failedFiles = report.testResults.filter((module) => module.status === "failed");
for (const module of failedFiles)
  console.log(`failed file: ${path.relative(process.cwd(), module.name)}`);

const problems = [
  summary.failed > 0 || failedFiles.length > 0 ? "tests failed" : "",
  summary.passed === 0 ? "no test ran" : "",
  IN_CI && summary.skipped > 0 ? "CI=true and tests were skipped" : "",
].filter(Boolean);
if (problems.length > 0) {
  console.error(`summary: ${problems.join("; ")}`);
  process.exitCode = 1;
}
