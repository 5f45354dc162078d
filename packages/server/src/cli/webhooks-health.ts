import type { Webhook } from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import type { CliIo } from "./cli-io.js";
import { printJson } from "./format-table.js";
import { parseId } from "./webhooks-test.js";

const REASONS = {
  manual: "disabled by an admin",
  auto_failing: "disabled by Parley: it kept failing",
  gone: "disabled by Parley: it answered 410 Gone",
} as const;

const CIRCUITS = {
  closed: "closed",
  open: "open: time-outs or connection failures in a row; deliveries wait for a probe",
  "half-open": "half-open: one delivery goes as a probe",
} as const;

/** `parley webhooks health <id>`: the endpoint's last 24 hours and its current state. */
export async function webhooksHealth(
  io: CliIo,
  idText: string,
  options: { json?: boolean },
): Promise<void> {
  const id = parseId(idText, "webhook id");
  const { api } = apiFromEnv(io.env);
  const { data: webhook } = await api("GET /api/admin/webhooks/{id}", { id });
  if (options.json) return printJson(io.out, webhook.health);
  for (const line of describeHealth(webhook)) io.out(line);
}

export function describeHealth(webhook: Webhook): string[] {
  const h = webhook.health;
  const state = webhook.enabled
    ? "enabled"
    : `${webhook.disabledReason === null ? "disabled" : REASONS[webhook.disabledReason]}` +
      (webhook.disabledAt === null ? "" : ` (${webhook.disabledAt})`);
  const rows: Array<[string, string]> = [
    ["state", state],
    ["attempts (24 h)", String(h.attempts24h)],
    [
      "success rate (24 h)",
      h.successRate24h === null ? "-" : `${(h.successRate24h * 100).toFixed(1)}%`,
    ],
    [
      "latency (24 h)",
      h.p50LatencyMs24h === null
        ? "-"
        : `p50 ${h.p50LatencyMs24h} ms, p95 ${h.p95LatencyMs24h ?? "-"} ms`,
    ],
    ["last success", h.lastSuccessAt ?? "-"],
    ["last failure", h.lastFailureAt ?? "-"],
    ["last error", h.lastError ?? "-"],
    ["failures in a row", String(h.consecutiveFailures)],
    ["circuit", CIRCUITS[h.circuit]],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return [
    `Webhook ${webhook.id} "${webhook.name}" -> ${webhook.url}`,
    ...rows.map(([label, value]) => `  ${`${label}:`.padEnd(width + 1)}  ${value}`),
  ];
}
