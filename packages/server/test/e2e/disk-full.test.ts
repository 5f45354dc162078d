import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { killAllServers } from "../helpers/spawn-server.js";
import { mountTmpfs } from "../helpers/tmpfs.js";
import { waitFor } from "../helpers/wait-for.js";
import { spawnWithIngestUrl } from "./e2e-support.js";

afterEach(killAllServers);

/** Size of the data dir's disk: the database, its write-ahead log and a filler file. */
const DISK_MIB = 4;

// A disk of the test's own, mounted here (root only), holding PARLEY_DATA_DIR.
describe("a full disk under SQLite", { tags: ["root"] }, () => {
  it("answers 507 insufficient_storage naming the cause in the log, is not ready until space is freed, then posts again by itself", async () => {
    const disk = await mountTmpfs(DISK_MIB);
    onTestFinished(async () => {
      await killAllServers();
      await disk.unmount();
    });
    const { server, ingestUrl } = await spawnWithIngestUrl({ PARLEY_DATA_DIR: disk.dir }, "full");
    // Messages of 8 KiB: each needs new pages in the write-ahead log.
    const post = async (n: number) => {
      const res = await fetch(ingestUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: `${n} ${"x".repeat(8 * 1024)}` }),
        signal: AbortSignal.timeout(10_000),
      });
      return { status: res.status, body: await res.text() };
    };
    const status = async (route: string) =>
      (await fetch(`${server.url}${route}`, { signal: AbortSignal.timeout(10_000) })).status;
    expect((await post(0)).status).toBe(200);

    disk.fill();
    // The log may still have room for a post or two: post until a write needs space.
    let refused: { status: number; body: string } | undefined;
    for (let n = 1; n <= 50 && !refused; n++) {
      const answer = await post(n);
      if (answer.status !== 200) refused = answer;
    }
    expect(refused?.status).toBe(507);
    expect(JSON.parse(refused!.body)).toMatchObject({ code: "insufficient_storage" });
    // The log names the real cause, not only the ROLLBACK that failed after it.
    await waitFor("the log to name the cause", () =>
      /SQLITE_FULL|database or disk is full/.test(server.output()),
    );
    expect(await status("/readyz")).toBe(503);
    expect(await status("/healthz")).toBe(200);

    disk.free();
    await waitFor("/readyz to answer 200 once space was freed", async () => {
      return (await status("/readyz")) === 200;
    });
    expect((await post(100)).status).toBe(200);
  }, 60_000);
});
