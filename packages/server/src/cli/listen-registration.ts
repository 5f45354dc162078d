import {
  RequestError,
  type CreateWebhookParams,
  type RequestInterface,
  type Webhook,
} from "@parley/client";
import { CliError } from "./cli-error.js";
import { cliFailure } from "./cli-failure.js";

/** The temporary endpoint of `parley webhooks listen --register`. */
export interface Registration {
  webhook: Webhook;
  /** Deletes the endpoint (its deliveries go with it). */
  remove(): Promise<void>;
}

/** The API's refusals of an address Parley will not send to, which a local listener meets first. */
const ADDRESS_REFUSALS = new Set(["url_scheme_not_allowed", "url_host_not_allowed"]);

/**
 * Creates the endpoint a listener receives on. When the server will not send to the listener's
 * address (http://, loopback), the refusal says what to do: allow it on a development server, or
 * give a public address (a tunnel) with --public-url.
 */
export async function registerEndpoint(
  api: RequestInterface,
  endpoint: Pick<CreateWebhookParams, "name" | "url" | "secret" | "events" | "signatureScheme">,
): Promise<Registration> {
  let webhook: Webhook;
  try {
    ({ data: webhook } = await api("POST /api/admin/webhooks", { data: endpoint }));
  } catch (error) {
    if (error instanceof RequestError && ADDRESS_REFUSALS.has(error.code ?? "")) {
      const failure = cliFailure(error);
      throw new CliError(
        `${failure.message}. A server sends to http:// and loopback addresses only with ` +
          "PARLEY_WEBHOOK_ALLOW_HTTP=true and PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (for development); " +
          "otherwise expose this listener (a tunnel) and give that address with --public-url",
        { exitCode: failure.exitCode, code: failure.code },
      );
    }
    throw error;
  }
  return {
    webhook,
    async remove() {
      try {
        await api("DELETE /api/admin/webhooks/{id}", { id: webhook.id });
      } catch (error) {
        if (error instanceof RequestError && error.status === 404) return; // already gone
        const failure = cliFailure(error);
        throw new CliError(
          `could not delete webhook ${webhook.id} (${failure.message}): delete it with \`parley webhooks delete ${webhook.id}\``,
          { exitCode: failure.exitCode, code: failure.code },
        );
      }
    },
  };
}
