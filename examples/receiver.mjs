#!/usr/bin/env node
// A Parley webhook receiver in plain Node `http`: it verifies each delivery's signature over the
// raw bytes, parses the event, drops duplicates, and answers quickly.
//
//   PARLEY_WEBHOOK_SECRET=whsec_... PORT=9000 node examples/receiver.mjs
//
// Then point a webhook at it (http is accepted only with PARLEY_WEBHOOK_ALLOW_HTTP and
// PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS on the server, or behind an https tunnel):
//
//   parley webhooks create --name local --url http://127.0.0.1:9000/ --events MESSAGE_CREATED \
//     --secret "$PARLEY_WEBHOOK_SECRET"
//
// Duplicates. Parley sends no idempotency header and may deliver an event more than once (a 2xx
// that never reached it, a manual redelivery). This receiver remembers what it handled for
// DEDUPE_TTL_MS (default one hour: longer than Parley's whole retry schedule) in memory, keyed on
// (webhookId, event, data.messageId) as Parley suggests; events without a messageId are keyed on
// a SHA-256 of the body, since a retry resends the exact same bytes. At most DEDUPE_MAX_KEYS keys
// are kept, the oldest dropped first. Memory is per process and lost on restart: with several
// instances, keep the keys in a shared store instead (for example Redis `SET key 1 NX PX ttl`).

import { createHash } from "node:crypto";
import http from "node:http";
import { parseWebhookEvent, verifyParleySignature } from "@parley/client";

const secret = process.env.PARLEY_WEBHOOK_SECRET;
if (!secret) {
  console.error("receiver: set PARLEY_WEBHOOK_SECRET to the webhook's secret");
  process.exit(1);
}
const port = Number(process.env.PORT ?? 9000);
const host = process.env.HOST ?? "127.0.0.1";
const ttlMs = Number(process.env.DEDUPE_TTL_MS ?? 3_600_000);
const maxKeys = Number(process.env.DEDUPE_MAX_KEYS ?? 100_000);

/** Keys seen recently, each with when it expires; a Map iterates oldest first. */
const seen = new Map();

function dedupeKey(event, rawBody) {
  const messageId = event.data.messageId;
  if (messageId !== undefined) return `${event.webhookId}:${event.event}:${messageId}`;
  return `${event.webhookId}:${event.event}:${createHash("sha256").update(rawBody).digest("hex")}`;
}

/** Records `key` and answers true, or answers false when it was seen within the TTL. */
function firstTime(key, now = Date.now()) {
  const expires = seen.get(key);
  if (expires !== undefined && expires > now) return false;
  seen.delete(key);
  seen.set(key, now + ttlMs);
  // Drop expired keys from the old end, then the oldest while over the cap.
  for (const [oldest, until] of seen) {
    if (until > now && seen.size <= maxKeys) break;
    seen.delete(oldest);
  }
  return true;
}

/** Your work goes here. Keep it fast: Parley waits 30 s at most; queue anything slow. */
async function handle(event) {
  switch (event.event) {
    case "MESSAGE_CREATED":
      console.log(`message ${event.data.messageId} in room ${event.data.roomId}`);
      break;
    case "WEBHOOK_TEST":
      console.log(`test event from ${event.data.requestedBy}`);
      break;
    default:
      console.log(`${event.event} ${JSON.stringify(event.data)}`);
  }
}

function answer(res, status, body) {
  res.writeHead(status, body === undefined ? {} : { "content-type": "application/json" });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

const server = http.createServer(async (req, res) => {
  if (req.method !== "POST") return answer(res, 405, { error: "POST only" });
  // The signature covers the exact bytes: read them, never a re-serialised parse.
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const rawBody = Buffer.concat(chunks);

  if (!verifyParleySignature(secret, rawBody, req.headers["x-webhook-signature-256"])) {
    console.log(`rejected: bad signature from ${req.socket.remoteAddress}`);
    return answer(res, 401, { error: "bad signature" });
  }
  let event;
  try {
    event = parseWebhookEvent(rawBody);
  } catch (error) {
    return answer(res, 400, { error: error.message });
  }

  const key = dedupeKey(event, rawBody);
  if (!firstTime(key)) {
    console.log(`duplicate ${key}: skipped`);
    return answer(res, 200, { duplicate: true });
  }
  try {
    await handle(event);
  } catch (error) {
    // Forget it, so Parley's retry is handled rather than skipped.
    seen.delete(key);
    console.error(`failed to handle ${key}: ${error.message}`);
    return answer(res, 500, { error: "handler failed" });
  }
  answer(res, 204);
});

server.listen(port, host, () => {
  const { address, port: bound } = server.address();
  console.log(`receiver listening on http://${address}:${bound}/`);
});
for (const signal of ["SIGINT", "SIGTERM"])
  process.once(signal, () => server.close(() => process.exit(0)));
