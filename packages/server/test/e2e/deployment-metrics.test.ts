import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAllServers, spawnServer } from "../helpers/spawn-server.js";

const DEPLOY = path.resolve(import.meta.dirname, "../../../../deploy");

/** Every series name /metrics can serve: each metric, and a histogram's _bucket, _sum, _count. */
let served: Set<string>;
let dataDir: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-metrics-names-"));
  // The Enterprise edition (the default) registers every metric, the webhook engine's included.
  const server = await spawnServer({ env: { PARLEY_DATA_DIR: dataDir } });
  const text = await (await fetch(`${server.url}/metrics`)).text();
  served = new Set();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    served.add(name!);
    if (type === "histogram" || type === "summary")
      for (const suffix of ["_bucket", "_sum", "_count"]) served.add(`${name}${suffix}`);
  }
  await server.kill("SIGTERM");
});

afterAll(async () => {
  await killAllServers();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The parley_* metric names a file refers to. */
function referenced(file: string): string[] {
  const text = fs.readFileSync(path.join(DEPLOY, file), "utf8");
  return [...new Set(text.match(/\bparley_[a-z0-9_]+/g) ?? [])].sort();
}

describe("the monitoring files in deploy/ refer only to metrics Parley serves", () => {
  it.each(["prometheus/parley-alerts.yml", "grafana/parley-dashboard.json"])("%s", (file) => {
    const names = referenced(file);
    expect(names.length).toBeGreaterThan(8);
    expect(names.filter((name) => !served.has(name))).toEqual([]);
  });

  it("the dashboard's every panel queries something, and is valid JSON", () => {
    const dashboard = JSON.parse(
      fs.readFileSync(path.join(DEPLOY, "grafana/parley-dashboard.json"), "utf8"),
    ) as { panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }> };
    const graphs = dashboard.panels.filter((panel) => panel.type !== "row");
    expect(graphs.length).toBeGreaterThan(10);
    for (const panel of graphs) expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
  });
});
