/**
 * What every peer of the delivery benchmark sends (graphile-worker-peer.ts, bullmq-peer.ts): the
 * envelope of one event, signed as Parley's sign-payload signs it and POSTed with undici, the
 * same bytes and headers Parley's engine sends.
 */
import { request, type Agent } from "undici";
import type { PeerReceiver } from "./graphile-worker-peer.js";
import { signPayload } from "../src/webhooks/outbound/delivery-engine/sign-payload.js";

const SECRET = "bench-secret-0123456789";

/** The frozen envelope a peer's job holds, keyed by `key` (the receiver matches arrivals by it). */
export function peerEnvelope(key: string): string {
  return JSON.stringify({
    event: "ADMIN_USER_DISABLED",
    timestamp: new Date().toISOString(),
    webhookId: 1,
    data: { username: key, adminActor: "bench" },
  });
}

/** Signs and POSTs one envelope; throws on an answer other than 2xx (the job fails, retried). */
export function signedPeerPost(url: string, agent: Agent): (envelope: string) => Promise<void> {
  return async (envelope) => {
    const body = Buffer.from(envelope);
    const res = await request(url, {
      dispatcher: agent,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "Parley-Webhooks/1.0",
        "x-webhook-signature-256": signPayload(SECRET, body),
      },
      body,
    });
    await res.body.dump();
    if (res.statusCode >= 300) throw new Error(`receiver answered ${res.statusCode}`);
  };
}

/** What a peer's burst measured: jobs/s to the last arrival, inserts/s, insert-to-arrival ms. */
export interface PeerBurst {
  rate: number;
  insertRate: number;
  latencies: number[];
}

/**
 * A peer's burst: `keys` inserted one at a time by `writers` concurrent writers (`insert`) while
 * its worker runs, then every arrival awaited at `receiver`.
 */
export async function measureBurst(
  receiver: PeerReceiver,
  keys: string[],
  writers: number,
  insert: (key: string) => Promise<unknown>,
): Promise<PeerBurst> {
  const clock = () => performance.timeOrigin + performance.now();
  const inserted = new Map<string, number>();
  const base = receiver.count;
  const started = clock();
  let next = 0;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < keys.length) {
        const key = keys[next++]!;
        await insert(key);
        inserted.set(key, clock());
      }
    }),
  );
  const allInserted = clock();
  await receiver.waitFor(base + keys.length, 300_000);
  const last = Math.max(...keys.map((key) => receiver.arrivals.get(key) ?? 0));
  const latencies: number[] = [];
  for (const [key, at] of inserted) {
    const arrived = receiver.arrivals.get(key);
    if (arrived !== undefined) latencies.push(arrived - at);
  }
  return {
    rate: (keys.length / (last - started)) * 1000,
    insertRate: (keys.length / (allInserted - started)) * 1000,
    latencies: latencies.sort((a, b) => a - b),
  };
}
