import type { HealthTrend, Webhook } from "@parley/client/browser";
import { link } from "../context.js";
import { badge, details, h, time, type Child } from "../dom.js";
import { inWords } from "./in-words.js";

function rateKind(rate: number | null): string {
  return rate === null ? "none" : rate >= 0.99 ? "good" : rate >= 0.9 ? "fair" : "poor";
}

function percent(rate: number): string {
  return `${(Math.floor(rate * 1000) / 10).toFixed(1)}%`;
}

/**
 * The 7-day trend as a row of seven bars (one per 24 hours, the latest on the right), each as
 * high as that day's success rate and coloured as the rate is. Screen readers get it as a list:
 * the bars are an image described by its text alternative, and each day's figure is written out.
 */
export function trendChart(trend: HealthTrend, name: string): HTMLElement {
  const days = trend.days;
  const words = days.map((day, i) => {
    const when = i === days.length - 1 ? "last 24 hours" : `${days.length - 1 - i} days before`;
    return day.successRate === null
      ? `${when}: no attempts`
      : `${when}: ${percent(day.successRate)} of ${day.attempts}`;
  });
  const summary = `Success rate of “${name}”, last 7 days, oldest first: ${words.join("; ")}.`;
  return h(
    "span",
    { class: "trend", role: "img", "aria-label": summary, title: words.join("\n") },
    days.map((day) => {
      const fill = h("span", { class: "fill" });
      // Through the CSSOM: the page's CSP allows no style attribute.
      fill.style.height = `${day.successRate === null ? 0 : Math.max(8, Math.round(day.successRate * 100))}%`;
      return h(
        "span",
        {
          class: `bar rate-${rateKind(day.successRate)}`,
          "data-rate": day.successRate === null ? "" : day.successRate.toFixed(3),
          "data-attempts": day.attempts,
        },
        fill,
      );
    }),
  );
}

/** Why an endpoint is not sending, or that it is: one badge per state, not one green for all. */
export function stateBadge(webhook: Webhook): HTMLSpanElement {
  if (webhook.state === "failing") return badge("failing");
  if (webhook.enabled) return badge("enabled");
  switch (webhook.disabledReason) {
    case "auto_failing":
      return badge("auto-disabled: failing", "auto-failing");
    case "gone":
      return badge("auto-disabled: 410 Gone", "gone");
    default:
      return badge("disabled");
  }
}

/** `97.5%` of the last 24 hours' attempts succeeded, or a dash without attempts. */
export function successRate(webhook: Webhook): string {
  const rate = webhook.health.successRate24h;
  if (rate === null) return "—";
  return `${(Math.floor(rate * 1000) / 10).toFixed(1)}%`;
}

/** The list's health cell: the success rate over 24 h, its attempts, and the last error. */
export function healthCell(webhook: Webhook): HTMLElement {
  const health = webhook.health;
  const rate = health.successRate24h;
  const kind = rate === null ? "none" : rate >= 0.99 ? "good" : rate >= 0.9 ? "fair" : "poor";
  return h(
    "span",
    { class: "health" },
    h(
      "span",
      { class: `rate rate-${kind}` },
      rate === null ? "no attempts in 24 h" : `${successRate(webhook)} ok`,
    ),
    rate === null ? null : h("span", { class: "muted" }, ` of ${health.attempts24h} in 24 h`),
    health.lastError === null || health.consecutiveFailures === 0
      ? null
      : h("span", { class: "last-error", title: health.lastError }, health.lastError),
  );
}

/** The endpoint page's health block. */
export function healthDetails(webhook: Webhook): HTMLDListElement {
  const health = webhook.health;
  return details([
    [
      "Success rate (24 h)",
      health.successRate24h === null
        ? "no attempts in the last 24 hours"
        : `${successRate(webhook)} of ${health.attempts24h} attempts`,
    ],
    [
      "Latency (24 h)",
      health.p50LatencyMs24h === null
        ? "—"
        : `p50 ${health.p50LatencyMs24h} ms · p95 ${health.p95LatencyMs24h ?? "—"} ms`,
    ],
    ["Last success", time(health.lastSuccessAt)],
    ["Last failure", time(health.lastFailureAt)],
    [
      "Last error",
      health.lastError === null ? "—" : h("span", { class: "error-text" }, health.lastError),
    ],
    ["Failures in a row", String(health.consecutiveFailures)],
  ]);
}

/** The attempt whose failure disabled it, as a link to its delivery. */
function blamedAttempt(webhook: Webhook): Child[] {
  const by = webhook.disabledBy;
  if (by === null) return [];
  return [
    " It was ",
    link(
      `/admin/webhooks/${webhook.id}/deliveries/${by.deliveryId}`,
      `attempt ${by.attempt} of delivery #${by.deliveryId}`,
    ),
    " that failed last.",
  ];
}

/** What Parley did and why, for an endpoint it disabled itself. */
export function disabledBecause(webhook: Webhook): Child[] | null {
  if (webhook.enabled) return null;
  if (webhook.disabledReason === "gone")
    return [
      "Parley disabled it: the receiver answered 410 Gone. Check the URL, then enable it; its held deliveries go out.",
      ...blamedAttempt(webhook),
    ];
  if (webhook.disabledReason === "auto_failing")
    return [
      "Parley disabled it: its deliveries kept failing. Fix the receiver, then enable it; its held deliveries go out.",
      ...blamedAttempt(webhook),
    ];
  return ["Disabled by an administrator: its deliveries are held until it is enabled again."];
}

/**
 * A failing endpoint's warning: since when, and when the auto-disable rule will disable it if
 * nothing succeeds before (docs/webhooks.md, "Endpoint states").
 */
export function failingWarning(webhook: Webhook, now = Date.now()): Child[] | null {
  if (webhook.state !== "failing") return null;
  const health = webhook.health;
  const run = [
    `Failing: its last ${health.consecutiveFailures === 1 ? "attempt" : `${health.consecutiveFailures} attempts`} failed`,
    ...(health.failingSince === null ? [] : [" (since ", time(health.failingSince), ")"]),
    ". ",
  ];
  if (webhook.autoDisableAt === null) return [...run, "Auto-disable is off: Parley keeps trying."];
  const more = webhook.failuresToAutoDisable ?? 0;
  const after =
    more === 0 ? "" : ` once ${more} more ${more === 1 ? "attempt fails" : "attempts fail"}`;
  const at = Date.parse(webhook.autoDisableAt);
  return at <= now
    ? [...run, `If nothing succeeds, Parley disables it at its next failed attempt${after}.`]
    : [
        ...run,
        `If nothing succeeds, Parley disables it ${inWords(at, now)}, at `,
        time(webhook.autoDisableAt),
        `${after}.`,
      ];
}

/** A banner over the list when Parley disabled endpoints by itself, with a link to each. */
export function autoDisabledBanner(webhooks: readonly Webhook[]): HTMLElement | null {
  const off = webhooks.filter(
    (w) => !w.enabled && (w.disabledReason === "auto_failing" || w.disabledReason === "gone"),
  );
  if (off.length === 0) return null;
  return h(
    "section",
    { class: "banner", id: "auto-disabled", "aria-labelledby": "auto-disabled-title" },
    h(
      "h2",
      { id: "auto-disabled-title" },
      off.length === 1
        ? "1 endpoint was disabled by Parley"
        : `${off.length} endpoints were disabled by Parley`,
    ),
    h(
      "ul",
      null,
      off.map((w) =>
        h(
          "li",
          null,
          link(`/admin/webhooks/${w.id}`, w.name),
          w.disabledReason === "gone"
            ? ": the receiver answered 410 Gone"
            : ": its deliveries kept failing",
          w.disabledAt === null ? null : [" (", time(w.disabledAt), ")"],
        ),
      ),
    ),
  );
}
