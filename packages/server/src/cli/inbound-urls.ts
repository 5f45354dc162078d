import type { InboundWebhookWithToken } from "@parley/client";

/** The URLs of an inbound webhook, one per sender format, as printed once (create, rotate-token). */
export function inboundUrls(hook: InboundWebhookWithToken): string[] {
  return [
    `  url:         ${hook.url}`,
    `  Slack url:   ${hook.slackUrl}`,
    `  Discord url: ${hook.discordUrl}`,
    `  GitHub url:  ${hook.githubUrl}`,
    `  Stripe url:  ${hook.stripeUrl}`,
    "  Each URL is its own credential and is shown only now: keep them secret.",
  ];
}
