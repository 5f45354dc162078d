import { randomBytes } from "node:crypto";
import type { CreateWebhookParams } from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { describeEndpoint } from "./describe-endpoint.js";
import { endpointSettingsFrom, type EndpointSettingOptions } from "./endpoint-settings.js";
import { printJson } from "./format-table.js";

export interface WebhooksCreateOptions extends EndpointSettingOptions {
  disabled?: boolean;
  json?: boolean;
}

/**
 * `parley webhooks create`: registers an outbound endpoint from flags and/or `--from-file`; the
 * secret is generated (and shown once) when neither gives one.
 */
export async function webhooksCreate(io: CliIo, options: WebhooksCreateOptions): Promise<void> {
  const api = () => apiFromEnv(io.env).api;
  const body = await endpointSettingsFrom(options, api, undefined, io.env);
  const missing = (["name", "url", "events"] as const).filter((field) => body[field] === undefined);
  if (missing.length > 0)
    throw new CliError(
      `${missing.map((field) => `--${field}`).join(", ")} ${missing.length === 1 ? "is" : "are"} required (as a flag or in --from-file)`,
    );
  // An ed25519 endpoint signs with the key pair Parley makes: no secret to generate or show.
  const ed25519 = body.signatureScheme === "standard-webhooks-ed25519";
  const generated = body.secret === undefined && !ed25519;
  // Standard Webhooks' format, as the API generates on rotation: the base64 the libraries read.
  const secret = generated ? `whsec_${randomBytes(32).toString("base64")}` : body.secret;
  const data = {
    ...body,
    ...(secret === undefined ? {} : { secret }),
    ...(options.disabled ? { enabled: false } : {}),
  };
  const { data: webhook } = await api()("POST /api/admin/webhooks", {
    data: data as CreateWebhookParams,
  });
  if (options.json) return printJson(io.out, generated ? { ...webhook, secret } : webhook);
  io.out(`Created webhook ${webhook.id} "${webhook.name}" -> ${webhook.url}`);
  for (const line of describeEndpoint(webhook)) io.out(line);
  if (generated) {
    io.out(`  secret: ${secret}`);
    io.out("  The secret is shown only now: store it with the receiver, which needs it to verify.");
  }
}
