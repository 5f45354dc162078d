import { setTimeout as sleep } from "node:timers/promises";
import { expect, it } from "vitest";
import { carryTrace, currentTrace } from "../../../src/tracing/request-trace.js";

const trace = (n: number) => ({
  traceParent: `00-${String(n).repeat(32)}-${"1".repeat(16)}-01`,
  traceState: null,
});

it("carries each request's trace across its awaits, apart from the others', and none once every request carrying one is over", async () => {
  const seen: Array<string | undefined> = [];
  let releaseOne = () => {};
  let releaseTwo = () => {};
  let resumeOne = () => {};
  const paused = new Promise<void>((resolve) => (resumeOne = resolve));
  const one = new Promise<void>((done) => {
    releaseOne = carryTrace(trace(1), () => {
      void (async () => {
        await sleep(1);
        seen.push(currentTrace()?.traceParent);
        await paused;
        // Still carried: the other request is over, this one is not.
        seen.push(currentTrace()?.traceParent);
        done();
      })();
    });
  });
  await new Promise<void>((done) => {
    releaseTwo = carryTrace(trace(2), () => {
      void (async () => {
        await sleep(2);
        seen.push(currentTrace()?.traceParent);
        done();
      })();
    });
  });
  releaseTwo();
  releaseTwo(); // a second call changes nothing
  resumeOne();
  await one;
  expect(seen).toEqual([trace(1).traceParent, trace(2).traceParent, trace(1).traceParent]);
  releaseOne();
  // Nothing carries a trace now: the storage is off (no promise hook), and reads find none.
  let after: string | undefined = "unset";
  await new Promise<void>((done) => {
    setImmediate(async () => {
      await sleep(1);
      after = currentTrace()?.traceParent;
      done();
    });
  });
  expect(after).toBeUndefined();
  expect(currentTrace()).toBeUndefined();
});
