/** Every benchmark of the server, one after the other: `npm run bench -w @parley/server`. */
import { runDeliveryBench } from "./delivery.bench.js";
import { runIngestBench } from "./ingest.bench.js";

const benchmarks: Array<[name: string, run: () => Promise<void>]> = [
  ["delivery", runDeliveryBench],
  ["ingest", () => runIngestBench()],
];

for (const [name, run] of benchmarks) {
  console.log(`\n=== ${name} ===`);
  await run();
}
