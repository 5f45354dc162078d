import { randomBytes } from "node:crypto";
import { apiFromEnv } from "./api-from-env.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { ORDERINGS } from "@parley/client/wire";
import { parseChoice, parseEvents } from "./parse-choice.js";

export interface WebhooksCreateOptions {
  name: string;
  url: string;
  /** Comma-separated, or given several times. */
  events: string[];
  /** Generated (and shown once) when not given. */
  secret?: string;
  disabled?: boolean;
  /** none, room or endpoint. */
  ordering?: string;
  json?: boolean;
}

/** `parley webhooks create`: registers an outbound endpoint. */
export async function webhooksCreate(io: CliIo, options: WebhooksCreateOptions): Promise<void> {
  const { api } = apiFromEnv(io.env);
  const generated = options.secret === undefined;
  // Standard Webhooks' format, as the API generates on rotation: the base64 the libraries read.
  const secret = options.secret ?? `whsec_${randomBytes(32).toString("base64")}`;
  const events = parseEvents(options.events);
  const ordering =
    options.ordering === undefined
      ? undefined
      : parseChoice(options.ordering, ORDERINGS, "--ordering");
  const { data: webhook } = await api("POST /api/admin/webhooks", {
    data: {
      name: options.name,
      url: options.url,
      secret,
      events,
      enabled: !options.disabled,
      ...(ordering === undefined ? {} : { ordering }),
    },
  });
  if (options.json) return printJson(io.out, generated ? { ...webhook, secret } : webhook);
  io.out(`Created webhook ${webhook.id} "${webhook.name}" -> ${webhook.url}`);
  io.out(`  events: ${webhook.events.join(", ")}${webhook.enabled ? "" : " (disabled)"}`);
  if (webhook.ordering !== "none") io.out(`  ordering: ${webhook.ordering}`);
  if (generated) {
    io.out(`  secret: ${secret}`);
    io.out("  The secret is shown only now: store it with the receiver, which needs it to verify.");
  }
}
