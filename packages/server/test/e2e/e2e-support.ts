import { setTimeout as sleep } from "node:timers/promises";
import type { Receiver } from "../helpers/receiver.js";
import type { SpawnedServer } from "../helpers/spawn-server.js";

/** Knobs for child processes: the whole state machine and a crashed worker's lease in seconds. */
export const FAST_ENV: Record<string, string> = {
  PARLEY_WEBHOOK_TIMEOUT_MS: "1000",
  PARLEY_WEBHOOK_BACKOFF_BASE_MS: "100",
  PARLEY_WEBHOOK_BACKOFF_MAX_MS: "1000",
  PARLEY_WEBHOOK_SWEEP_INTERVAL_MS: "500",
  PARLEY_WEBHOOK_CONCURRENCY: "16",
};

async function call(
  server: SpawnedServer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** Registers a webhook endpoint through the admin API; returns its id. */
export async function createEndpoint(
  server: SpawnedServer,
  token: string,
  url: string,
): Promise<number> {
  const res = await call(server, token, "POST", "/api/admin/webhooks", {
    name: "e2e receiver",
    url,
    secret: "e2e-signing-secret-0123456789",
    events: ["ADMIN_USER_DISABLED"],
  });
  if (res.status !== 201)
    throw new Error(`creating the webhook answered ${res.status}: ${JSON.stringify(res.json)}`);
  return (res.json as { id: number }).id;
}

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
        const res = await call(server, token, "POST", "/api/admin/users", {
          username,
          role: "user",
        });
        if (res.status !== 201)
          throw new Error(
            `creating ${username} answered ${res.status}: ${JSON.stringify(res.json)}`,
          );
        return { id: (res.json as { id: number }).id, username };
      });
      await attempt(async () => {
        const server = servers[turn++ % servers.length]!;
        const res = await call(server, token, "POST", `/api/admin/users/${id.id}/disable`);
        if (res.status !== 200) throw new Error(`disabling ${id.username} answered ${res.status}`);
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
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = receivedUsernames(receiver);
    const missing = expected.filter((name) => !seen.has(name));
    if (missing.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `${missing.length} of ${expected.length} events never arrived, e.g. ${missing.slice(0, 5).join(", ")}`,
      );
    }
    await sleep(100);
  }
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
  while (receiver.requests.length - from < count) await sleep(5);
  await server.kill("SIGKILL");
  return receiver.requests.length - from;
}

/** Reads one counter value from a process's /metrics. */
export async function metricValue(server: SpawnedServer, series: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}
