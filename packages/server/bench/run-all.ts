/**
 * Every benchmark of the server, one after the other: `npm run bench -w @parley/server`.
 *
 *   --quick                 shorter runs of everything (development; the figures are rougher)
 *   --steady-seconds N      the delivery benchmark's steady run on each database (default 60)
 *   --skip-large-table      leave out the 1,000,000-row delivery table benchmark
 *   --skip-scale-out        leave out one against two Parley processes on PostgreSQL
 *   --only a,b              only these (dead-receivers, delivery, delivery-search,
 *                           ed25519, enterprise-receivers, inbound,
 *                           ingest, large-table, login, messages-that-live, ordered-lanes,
 *                           room-list, scale-out, search, send-threads, stream,
 *                           sustained)
 *
 * The same from the environment, for `npm run bench` at the root (which passes no flags):
 * PARLEY_BENCH_QUICK=1, PARLEY_BENCH_STEADY_SECONDS=N, PARLEY_BENCH_SKIP_LARGE_TABLE=1,
 * PARLEY_BENCH_SKIP_SCALE_OUT=1, PARLEY_BENCH_ONLY=a,b.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { deadReceiversOptionsFrom, runDeadReceiversBench } from "./dead-receivers.bench.js";
import { runDeliverySearchBench } from "./delivery-search.bench.js";
import { deliveryOptionsFrom, runDeliveryBench } from "./delivery.bench.js";
import { ed25519OptionsFrom, runEd25519Bench } from "./ed25519-signatures.bench.js";
import {
  enterpriseReceiversOptionsFrom,
  runEnterpriseReceiversBench,
} from "./enterprise-receivers.bench.js";
import { inboundOptionsFrom, runInboundBench } from "./inbound-from-the-world.bench.js";
import { runIngestBench } from "./ingest.bench.js";
import { largeTableOptionsFrom, runLargeTableBench } from "./large-table.bench.js";
import { runLoginBench } from "./login.bench.js";
import {
  messagesThatLiveOptionsFrom,
  runMessagesThatLiveBench,
} from "./messages-that-live.bench.js";
import { orderedLanesOptionsFrom, runOrderedLanesBench } from "./ordered-lanes.bench.js";
import { roomListOptionsFrom, runRoomListBench } from "./room-list.bench.js";
import { runScaleOutBench, scaleOutOptionsFrom } from "./scale-out.bench.js";
import { runSearchBench, searchOptionsFrom } from "./search.bench.js";
import { runSendThreadsBench, sendThreadsOptionsFrom } from "./send-threads.bench.js";
import { runStreamBench } from "./stream.bench.js";
import { runSustainedBench, sustainedOptionsFrom } from "./sustained-rate.bench.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean" },
    "steady-seconds": { type: "string" },
    "skip-large-table": { type: "boolean" },
    "skip-scale-out": { type: "boolean" },
    only: { type: "string" },
  },
});
const env = process.env;
const quick = values.quick || env.PARLEY_BENCH_QUICK === "1";
const steadySeconds = values["steady-seconds"] ?? env.PARLEY_BENCH_STEADY_SECONDS;
const skipLargeTable = values["skip-large-table"] || env.PARLEY_BENCH_SKIP_LARGE_TABLE === "1";
const skipScaleOut = values["skip-scale-out"] || env.PARLEY_BENCH_SKIP_SCALE_OUT === "1";
const only = (values.only ?? env.PARLEY_BENCH_ONLY)?.split(",").map((name) => name.trim());

const benchmarks: Array<[name: string, run: () => Promise<void>]> = [
  [
    "delivery",
    () => runDeliveryBench(deliveryOptionsFrom({ quick, "steady-seconds": steadySeconds })),
  ],
  ["send-threads", () => runSendThreadsBench(sendThreadsOptionsFrom({ quick }))],
  ["sustained", () => runSustainedBench(sustainedOptionsFrom({ quick }))],
  ["delivery-search", () => runDeliverySearchBench(quick ? 100_000 : undefined)],
  ["dead-receivers", () => runDeadReceiversBench(deadReceiversOptionsFrom({ quick }))],
  [
    "enterprise-receivers",
    () => runEnterpriseReceiversBench(enterpriseReceiversOptionsFrom({ quick })),
  ],
  ["ed25519", () => runEd25519Bench(ed25519OptionsFrom({ quick }))],
  ["ordered-lanes", () => runOrderedLanesBench(orderedLanesOptionsFrom({ quick }))],
  [
    "ingest",
    () =>
      runIngestBench(
        quick
          ? { duration: 3, connections: 50, rounds: 1 }
          : { duration: 10, connections: 50, rounds: 3 },
      ),
  ],
  ["inbound", () => runInboundBench(inboundOptionsFrom({ quick }))],
  ["large-table", () => runLargeTableBench(largeTableOptionsFrom({ quick }))],
  ["login", () => runLoginBench({ quick })],
  ["messages-that-live", () => runMessagesThatLiveBench(messagesThatLiveOptionsFrom({ quick }))],
  ["room-list", () => runRoomListBench(roomListOptionsFrom({ quick }))],
  ["scale-out", () => runScaleOutBench(scaleOutOptionsFrom({ quick }))],
  ["search", () => runSearchBench(searchOptionsFrom({ quick }))],
  [
    "stream",
    () =>
      runStreamBench(
        quick ? { clients: 500, rate: 100, seconds: 3 } : { clients: 2000, rate: 200, seconds: 5 },
      ).then(() => undefined),
  ],
];

const started = performance.now();
for (const [name, run] of benchmarks) {
  if (only && !only.includes(name)) continue;
  if (name === "large-table" && skipLargeTable) {
    console.log(`\n=== ${name}: skipped (--skip-large-table) ===`);
    continue;
  }
  if (name === "scale-out" && skipScaleOut) {
    console.log(`\n=== ${name}: skipped (--skip-scale-out) ===`);
    continue;
  }
  const [load1, load5] = os.loadavg();
  console.log(
    `\n=== ${name} === (load average ${load1!.toFixed(1)} / ${load5!.toFixed(1)}, ` +
      `${((performance.now() - started) / 60_000).toFixed(1)} min in)`,
  );
  await run();
}
console.log(`\nall benchmarks: ${((performance.now() - started) / 60_000).toFixed(1)} min`);
