import { setTimeout as sleep } from "node:timers/promises";

/**
 * Polls `check` until it answers something truthy and resolves with it; fails after `timeoutMs`
 * naming what it waited for (`what` may be a function, to say how far it got). For a condition
 * with no event to wait on: a row's state, a log line, a process's output. Prefer a causal signal
 * where there is one (receiver.waitForRequests, dispatcher.idle, a promise the test releases).
 */
export async function waitFor<T>(
  what: string | (() => string),
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) {
      const described = typeof what === "function" ? what() : what;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${described}`);
    }
    await sleep(20);
  }
}

/**
 * Resolves once `Date.now()` has passed `since` (default: now): timestamps are whole
 * milliseconds, so a write made after this shows a later `updatedAt` than one made before, and a
 * write that does NOT bump it shows the same value. Not a delay to let something happen.
 */
export async function nextMillisecond(since = Date.now()): Promise<void> {
  while (Date.now() <= since) await sleep(1);
}
