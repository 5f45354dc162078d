import type { Webhook } from "@parley/client";

/**
 * An endpoint's settings as indented lines under the command's first line: the events, and each
 * setting that is not its default (header values come masked from the API).
 */
export function describeEndpoint(webhook: Webhook): string[] {
  const lines = [`  events: ${webhook.events.join(", ")}${webhook.enabled ? "" : " (disabled)"}`];
  if (webhook.signatureScheme !== "parley")
    lines.push(`  signature scheme: ${webhook.signatureScheme}`);
  if (webhook.publicKey !== null)
    lines.push(`  public key: ${webhook.publicKey} (receivers verify v1a signatures with it)`);
  if (webhook.verification === "pending")
    lines.push(
      "  ownership: pending (nothing is sent until the receiver echoes the WEBHOOK_VERIFICATION challenge; parley webhooks verify <id> sends it again)",
    );
  if (webhook.verification === "verified") lines.push("  ownership: verified");
  if (webhook.roomIds !== null) lines.push(`  rooms: ${webhook.roomIds.join(", ")}`);
  const headers = Object.entries(webhook.headers);
  if (headers.length > 0)
    lines.push(`  headers: ${headers.map(([name, value]) => `${name}: ${value}`).join("; ")}`);
  if (webhook.maxDeliveriesPerSecond !== null)
    lines.push(`  rate limit: ${webhook.maxDeliveriesPerSecond} per second`);
  if (webhook.ordering !== "none") lines.push(`  ordering: ${webhook.ordering}`);
  if (webhook.payloadFormat !== "parley") lines.push(`  payload format: ${webhook.payloadFormat}`);
  if (webhook.traceContext) lines.push("  trace context: sent (traceparent)");
  // Credentials come masked from the API.
  const auth = webhook.auth;
  if (auth?.type === "basic")
    lines.push(`  auth: basic, user ${auth.username}, password ${auth.password}`);
  if (auth?.type === "bearer") lines.push(`  auth: bearer token ${auth.token}`);
  if (auth?.type === "oauth2")
    lines.push(
      `  auth: OAuth 2.0 client ${auth.clientId} at ${auth.tokenUrl} (secret ${auth.clientSecret}${auth.scope === null ? "" : `, scope ${auth.scope}`}${auth.audience === null ? "" : `, audience ${auth.audience}`})`,
    );
  if (webhook.tls)
    lines.push(`  client certificate: ${webhook.tls.subject}, expires ${webhook.tls.expiresAt}`);
  return lines;
}
