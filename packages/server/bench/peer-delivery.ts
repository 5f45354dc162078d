/**
 * What every peer of the delivery benchmark sends (graphile-worker-peer.ts, bullmq-peer.ts): the
 * envelope of one event, signed as Parley's sign-payload signs it and POSTed with undici, the
 * same bytes and headers Parley's engine sends.
 */
import { request, type Agent } from "undici";
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
