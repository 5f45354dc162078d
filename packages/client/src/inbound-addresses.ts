/**
 * The addresses one inbound webhook answers on, one per sender format, all carrying its token
 * (the only credential). The server answers them on create and rotate-token; the admin UI shows
 * them with a placeholder in place of the token, which it never learns again.
 */
export interface InboundWebhookAddresses {
  /** Parley's own JSON, `{content, contentFormat?, threadId?}`. */
  url: string;
  /** Slack incoming-webhook payloads. */
  slackUrl: string;
  /** Discord's Execute Webhook (the inbound webhook's id and token, Discord's API version 10). */
  discordUrl: string;
  /** GitHub webhook deliveries (signed with the webhook's signing secret when it has one). */
  githubUrl: string;
  /** Stripe events (signed with the webhook's signing secret when it has one). */
  stripeUrl: string;
}

/** `baseUrl` is Parley's public address without a trailing slash, e.g. `https://chat.example.com`. */
export function inboundWebhookAddresses(
  baseUrl: string,
  webhook: { id: number; token: string },
): InboundWebhookAddresses {
  const base = baseUrl.replace(/\/+$/, "");
  const url = `${base}/api/public/webhooks/ingest/${webhook.token}`;
  return {
    url,
    slackUrl: `${url}/slack`,
    discordUrl: `${base}/api/public/discord/v10/webhooks/${webhook.id}/${webhook.token}`,
    githubUrl: `${url}/github`,
    stripeUrl: `${url}/stripe`,
  };
}
