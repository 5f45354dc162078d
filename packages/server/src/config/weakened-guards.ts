import type { Config } from "./load-config.js";

/** Whether the listen address is reachable from this host only. */
function loopbackOnly(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

/**
 * The settings of this configuration that turn a protection off or down, each as one sentence
 * saying what is now allowed and which setting did it. `parley serve` logs each as a warning at
 * start, before its banner, so that a development setting carried into production is seen.
 */
export function weakenedGuards(config: Config): string[] {
  const warnings: string[] = [];
  if (config.webhookAllowPrivateNetworks)
    warnings.push(
      "PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true turns the SSRF guard off: endpoint URLs may " +
        "point at this host and at private networks (loopback, 10/8, 192.168/16, link-local " +
        "metadata addresses). For development and tests only.",
    );
  if (config.webhookAllowHttp)
    warnings.push(
      "PARLEY_WEBHOOK_ALLOW_HTTP=true: endpoint URLs may be http://, so events and their " +
        "signatures travel unencrypted. For development and tests only.",
    );
  if (config.insecureKeysInDatabase && config.databaseUrl)
    warnings.push(
      "PARLEY_INSECURE_KEYS_IN_DATABASE=true: generated keys are stored in plain text in the " +
        "database, so anyone who reads it or a backup can forge tokens and read webhook secrets. " +
        "Set PARLEY_MASTER_KEY_FILE instead.",
    );
  const reachable = !loopbackOnly(config.host);
  if (reachable && !config.publicBaseUrl?.startsWith("https:"))
    warnings.push(
      `PARLEY_HOST=${config.host} listens beyond this host, and PARLEY_PUBLIC_BASE_URL is ` +
        (config.publicBaseUrl ? `${config.publicBaseUrl}, not https://` : "unset") +
        ": session cookies are sent without the Secure flag. Serve Parley through a TLS proxy " +
        "and set PARLEY_PUBLIC_BASE_URL=https://<its address>.",
    );
  if (reachable && config.metricsToken === undefined)
    warnings.push(
      `PARLEY_HOST=${config.host} listens beyond this host and PARLEY_METRICS_TOKEN is unset: ` +
        "/metrics answers anyone who reaches the port.",
    );
  if (config.streamMaxSocketsPerAddress === 0)
    warnings.push(
      "PARLEY_STREAM_MAX_SOCKETS_PER_ADDRESS=0: one client address may hold every live-stream " +
        "socket of the process.",
    );
  if (config.iceServersStaticCredentials)
    warnings.push(
      "PARLEY_ICE_SERVERS_STATIC_CREDENTIALS=true: every user who reads a call gets the TURN " +
        "server's static credentials, which keep working after the user is disabled.",
    );
  if (config.edition === "enterprise" && config.moderationProvider === "off")
    warnings.push("PARLEY_MODERATION_PROVIDER=off: messages are not screened for moderation.");
  return warnings;
}
