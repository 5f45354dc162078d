#!/usr/bin/env node
// Posts a message into a Parley room through an inbound webhook URL: the URL is the only
// credential, so keep it out of logs and source control.
//
//   node examples/post-to-room.mjs <ingest-url> "Deploy **finished**"
//   PARLEY_INBOUND_URL=https://chat.example.com/api/public/webhooks/ingest/... \
//     node examples/post-to-room.mjs "Deploy **finished**"
//   echo "<b>built</b>" | node examples/post-to-room.mjs --html <ingest-url>
//
// The content is markdown unless --html is given (HTML is sanitized by Parley before storing).

import { readFileSync } from "node:fs";
import { RequestError, request } from "@parley/client";

const args = process.argv.slice(2);
const html = args.includes("--html");
const rest = args.filter((arg) => arg !== "--html");
const url = /^https?:\/\//.test(rest[0] ?? "") ? rest.shift() : process.env.PARLEY_INBOUND_URL;
if (!url) {
  console.error(
    "usage: post-to-room.mjs [--html] <ingest-url> [message]   (or set PARLEY_INBOUND_URL)",
  );
  process.exit(2);
}
const content = rest.length > 0 ? rest.join(" ") : readFileSync(0, "utf8").trimEnd();

try {
  const { data } = await request(`POST ${url}`, {
    content,
    contentFormat: html ? "html" : "markdown",
    // The ingest route wants plain JSON; no authorization header: the URL carries the token.
    headers: { accept: "application/json" },
  });
  console.log(`posted message ${data.messageId} at ${data.timestamp}`);
} catch (error) {
  // RequestError messages and fields never contain the token: the URL is redacted.
  if (error instanceof RequestError && error.problem) {
    console.error(`post-to-room: ${error.problem.code}: ${error.problem.detail}`);
  } else {
    console.error(`post-to-room: ${error.message}`);
  }
  process.exit(1);
}
