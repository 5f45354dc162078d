import { setTimeout as sleep } from "node:timers/promises";
import { onTestFinished } from "vitest";
import { apiFor } from "../helpers/fixtures.js";
import type { Receiver } from "../helpers/receiver.js";
import { spawnServer, type SpawnedServer } from "../helpers/spawn-server.js";
import { waitFor } from "../helpers/wait-for.js";

/**
 * Produces one ADMIN_USER_DISABLED event per name through the admin API (create a user, disable
 * it), `parallel` at a time, spreading requests over `servers`. Resolves with the usernames whose
 * disable was acknowledged (each is then a committed event). With `retry`, requests that fail
 * (database restarting) are tried again: a failed create with a new name, a failed disable as is
 * (disabling twice fires the event once). With `stopOnFailure`, the first failure (the server was
 * killed) ends production and what was acknowledged so far is returned.
 */
export async function produceEvents(
  servers: SpawnedServer[],
  token: string,
  names: string[],
  options: { parallel?: number; retry?: boolean; stopOnFailure?: boolean } = {},
): Promise<string[]> {
  const acknowledged: string[] = [];
  let next = 0;
  let turn = 0;
  const attempt = async <T>(work: () => Promise<T>): Promise<T> => {
    for (let tries = 0; ; tries++) {
      try {
        return await work();
      } catch (error) {
        if (!options.retry || tries > 100) throw error;
        await sleep(100);
      }
    }
  };
  const worker = async () => {
    while (next < names.length) {
      const base = names[next++]!;
      let suffix = 0;
      const id = await attempt(async () => {
        const server = servers[turn++ % servers.length]!;
        const username = suffix === 0 ? base : `${base}-r${suffix}`;
        suffix++;
        const { data } = await apiFor({ url: server.url, token })("POST /api/admin/users", {
          username,
          role: "user",
        });
        return { id: data.id, username };
      });
      await attempt(async () => {
        const server = servers[turn++ % servers.length]!;
        await apiFor({ url: server.url, token })("POST /api/admin/users/{id}/disable", {
          id: id.id,
        });
      });
      acknowledged.push(id.username);
    }
  };
  const guarded = async () => {
    try {
      await worker();
    } catch (error) {
      if (!options.stopOnFailure) throw error;
      next = names.length;
    }
  };
  await Promise.all(Array.from({ length: options.parallel ?? 4 }, guarded));
  return acknowledged;
}

/** The usernames the receiver got ADMIN_USER_DISABLED deliveries for, with how many times each. */
export function receivedUsernames(receiver: Receiver): Map<string, number> {
  const seen = new Map<string, number>();
  for (const request of receiver.requests) {
    const { data } = JSON.parse(request.body.toString("utf8")) as { data: { username: string } };
    seen.set(data.username, (seen.get(data.username) ?? 0) + 1);
  }
  return seen;
}

/** Waits until every name in `expected` has reached the receiver at least once. */
export async function waitForAll(
  receiver: Receiver,
  expected: string[],
  timeoutMs: number,
): Promise<void> {
  const missing = () => {
    const seen = receivedUsernames(receiver);
    return expected.filter((name) => !seen.has(name));
  };
  await waitFor(
    () => {
      const left = missing();
      return `every event at the receiver: ${left.length} of ${expected.length} missing, e.g. ${left.slice(0, 5).join(", ")}`;
    },
    () => missing().length === 0,
    timeoutMs,
  );
}

/**
 * SIGKILLs `server` as soon as `count` deliveries have arrived at the receiver since `from`
 * requests (or at once if they already have). Resolves with the arrivals counted at the kill.
 */
export async function killAfterArrivals(
  server: SpawnedServer,
  receiver: Receiver,
  from: number,
  count: number,
): Promise<number> {
  await receiver.waitForRequests(from + count, 60_000);
  await server.kill("SIGKILL");
  return receiver.requests.length - from;
}

/** Reads one counter value from a process's /metrics. */
export async function metricValue(server: SpawnedServer, series: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/**
 * A server spawned with `env` (its output printed when the test fails) and the token URL of an
 * inbound webhook into a new room: what a test of the server under database trouble posts to.
 */
export async function spawnWithIngestUrl(
  env: Record<string, string>,
  roomName: string,
): Promise<{ server: SpawnedServer; ingestUrl: string }> {
  const server = await spawnServer({ env });
  onTestFinished((context) => {
    if (context.task.result?.state === "fail") console.error(server.output());
  });
  const admin = apiFor({ url: server.url, token: server.adminToken! });
  const { data: room } = await admin("POST /api/rooms", { name: roomName });
  const { data: created } = await admin("POST /api/admin/inbound-webhooks", {
    roomId: room.id,
    displayName: "Sender",
  });
  return { server, ingestUrl: `${server.url}/api/public/webhooks/ingest/${created.token}` };
}
