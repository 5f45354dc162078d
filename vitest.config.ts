import { defineConfig } from "vitest/config";
import { IN_CI, TEST_SERVICES } from "./packages/server/test/helpers/services.js";
import { RunSummaryReporter } from "./scripts/vitest/run-summary-reporter.js";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/test/**/*.test.ts"],
    // Type tests (*.test-d.ts): compiled, not run; a type error in one fails the test run.
    typecheck: {
      enabled: true,
      include: ["packages/*/test/**/*.test-d.ts", "examples/test/**/*.test-d.ts"],
      tsconfig: "./tsconfig.test.json",
    },
    // Integration suites start real servers, databases and child processes.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two cores: more workers only add contention.
    maxWorkers: 2,
    // Fails the run in CI when PostgreSQL, Redis, Chromium or PostgreSQL's binaries are missing.
    globalSetup: ["./scripts/vitest/global-setup.ts"],
    // Fails a file that leaves servers, sockets, pools, child processes or timers open.
    setupFiles: ["./scripts/vitest/leak-check.ts"],
    // A test needing an outside service carries its tag; without the service it is skipped (and
    // listed in the summary), except in CI, where the global setup fails the run instead.
    tags: [
      { name: "sqlite", description: "runs on SQLite" },
      ...TEST_SERVICES.map((service) => ({
        name: service.tag,
        description: `needs ${service.description}`,
        skip: service.missing() !== undefined,
      })),
    ],
    reporters: IN_CI
      ? ["default", "json", new RunSummaryReporter()]
      : ["default", new RunSummaryReporter()],
    outputFile: { json: "test-results/vitest.json" },
  },
});
