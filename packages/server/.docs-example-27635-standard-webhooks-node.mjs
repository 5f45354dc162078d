// receiver.mjs: PARLEY_WEBHOOK_SECRET=whsec_... PORT=9000 node receiver.mjs
import http from "node:http";
import { parseWebhookEvent, verifySignatureHeaders } from "@parley/client";

// While rotating, list both: [newSecret, oldSecret].
const secrets = process.env.PARLEY_WEBHOOK_SECRET.split(",");

http
  .createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const rawBody = Buffer.concat(chunks); // verify the bytes as received
    const check = verifySignatureHeaders({
      secret: secrets,
      rawBody,
      headers: req.headers,
      schemes: ["standard-webhooks"], // never the timestamp-less parley header: no replays
    });
    if (!check.ok) {
      res.writeHead(401).end(check.reason);
      return;
    }
    const event = parseWebhookEvent(rawBody);
    res.writeHead(204).end(); // answer first, work after
    console.log(check.eventId, event.event);
  })
  .listen(Number(process.env.PORT ?? 9000), "127.0.0.1");