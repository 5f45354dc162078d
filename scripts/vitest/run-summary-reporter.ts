import type { Reporter, TestModule } from "vitest/node";
import { IN_CI } from "../../packages/server/test/helpers/services.js";
import { summarizeTests, type TestOutcome } from "./summarize-tests.js";

/**
 * Ends every run with what it proved (tests per database, per suite, per outside service) and
 * lists the skipped tests with the reason. With CI=true a skipped test fails the run: in CI every
 * test must run, so a missing service or a stray `.skip` cannot pass unnoticed.
 */
export class RunSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const outcomes: TestOutcome[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        outcomes.push({
          file: module.relativeModuleId,
          name: test.fullName,
          tags: test.tags,
          state: state === "pending" ? "skipped" : state,
        });
      }
    }
    if (outcomes.length === 0) return;
    const summary = summarizeTests(outcomes);
    console.log(`\n${summary.lines.join("\n")}`);
    if (IN_CI && summary.skipped > 0) {
      console.error(
        `\nCI=true: every test must run, and ${summary.skipped} were skipped (listed above).`,
      );
      process.exitCode = 1;
    }
  }
}
