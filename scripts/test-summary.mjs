// Prints the plain closing line of a vitest JSON report: "vitest: N passed, N failed, N skipped".
import { readFileSync } from "node:fs";

const file = process.argv[2] ?? "test-results/vitest.json";
const report = JSON.parse(readFileSync(file, "utf8"));
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(
  `vitest: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`,
);
process.exitCode = report.numFailedTests > 0 ? 1 : 0;
