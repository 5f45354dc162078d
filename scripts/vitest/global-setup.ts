import { IN_CI, TEST_SERVICES } from "../../packages/server/test/helpers/services.js";

/**
 * With CI=true, fails the run before any test starts when an outside service some tests need is
 * not configured or does not answer, naming each one. Locally their tests are skipped instead
 * (vitest.config.ts) and listed at the end of the run.
 */
export default async function checkServices(): Promise<void> {
  if (!IN_CI) return;
  const problems: string[] = [];
  for (const service of TEST_SERVICES) {
    const why = service.missing() ?? (await service.unreachable());
    if (why !== undefined) problems.push(`${service.description} [tag ${service.tag}]: ${why}`);
  }
  if (problems.length === 0) return;
  const message =
    `CI=true, and tests that must run in CI cannot:\n  - ${problems.join("\n  - ")}\n` +
    "(without CI=true these tests are skipped and listed at the end of the run)";
  console.error(`\n${message}\n`);
  throw new Error(message);
}
