/**
 * Fails a test file that leaves handles open after its last hook: a server still listening, a
 * socket, a database pool, a child process, a timer. Each file runs in a process of its own, so
 * what the file opened and did not close is what is left over against the count taken before its
 * first test. A leak is a test bug (a later test may see the leftover work) and keeps a worker
 * alive; the message names the kinds of handle left.
 *
 * Registered in vitest.config.ts as a setup file: the count is taken before the test file is
 * imported, and its afterAll is registered before the file's own hooks, so it runs after all of
 * them.
 */
import { afterAll } from "vitest";

/**
 * Not leaks: requests in progress inside Node's own thread pool (an fs call or a DNS lookup that
 * completes by itself), immediates, and the terminal.
 */
const IGNORED = new Set([
  "FSReqCallback",
  "FSReqPromise",
  "Immediate",
  "TTYWrap",
  "GetAddrInfoReqWrap",
]);

/** How long closed handles may take to go away (a socket closes on a later turn of the loop). */
const SETTLE_MS = 2_000;

function counts(): Map<string, number> {
  const map = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (!IGNORED.has(kind)) map.set(kind, (map.get(kind) ?? 0) + 1);
  }
  return map;
}

// Timers count from zero: vitest's own are short-lived (its console output is flushed on a
// timer, for one), so a count taken at the start could hide a timer the file leaked.
const before = counts();
before.delete("Timeout");

function excess(): string[] {
  const left: string[] = [];
  for (const [kind, n] of counts()) {
    const more = n - (before.get(kind) ?? 0);
    if (more > 0) left.push(`${more} ${kind}`);
  }
  return left;
}

afterAll(async () => {
  const deadline = Date.now() + SETTLE_MS;
  let left = excess();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = excess();
  }
  if (left.length > 0) {
    throw new Error(
      `this file left handles open after its tests: ${left.join(", ")} ` +
        "(close servers, sockets, pools, child processes and timers in afterAll or onTestFinished)",
    );
  }
});
