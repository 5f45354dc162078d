/** Every benchmark of the server, one after the other: `npm run bench -w @parley/server`. */
import { runDeliverySearchBench } from "./delivery-search.bench.js";
import { runDeliveryBench } from "./delivery.bench.js";
import { runIngestBench } from "./ingest.bench.js";
import { runStreamBench } from "./stream.bench.js";

const benchmarks: Array<[name: string, run: () => Promise<void>]> = [
  ["delivery", runDeliveryBench],
  ["delivery search", runDeliverySearchBench],
  ["ingest", () => runIngestBench()],
  ["stream", async () => void (await runStreamBench())],
];

for (const [name, run] of benchmarks) {
  console.log(`\n=== ${name} ===`);
  await run();
}
