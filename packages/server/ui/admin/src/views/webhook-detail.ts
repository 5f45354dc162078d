import {
  EVENT_NAMES,
  WEBHOOK_TEST,
  type DeliverableEvent,
  type DeliveryDetail,
  type DeliveryStatus,
  type DeliverySummary,
  type Webhook,
} from "@parley/client/browser";
import { isStatus, paginate } from "../api.js";
import { flashFailure, link, type View, type ViewContext } from "../context.js";
import {
  badge,
  busy,
  copyField,
  details,
  h,
  replaceChildren,
  row,
  table,
  time,
  type Child,
} from "../dom.js";
import { pagedTable } from "../paged-table.js";
import { byId, loadRooms, roomName } from "../rooms.js";
import { recoverPanel, rotateSecretPanel } from "./endpoint-operations.js";
import { headerTabs } from "./header-tabs.js";
import { attemptsOf, deliveryBadge, nextAttempt, stateSentence } from "./delivery-state.js";
import { disabledBecause, failingWarning, healthDetails, stateBadge } from "./webhook-health.js";
import { notModified, pollWhileShown } from "../poll.js";
import * as actions from "./webhook-actions.js";
import { replayMissingPanel } from "./replay-missing.js";
import { testEventControls } from "./test-event.js";
import { webhookForm } from "./webhook-form.js";

const STATUSES: DeliveryStatus[] = ["PENDING", "SUCCESS", "FAILED", "EXHAUSTED"];
const LOG_EVENTS: DeliverableEvent[] = [...EVENT_NAMES, WEBHOOK_TEST];
const PAGE_SIZE = 25;

/** The endpoint's rooms by name, filled in once the rooms are loaded. */
function roomNames(context: ViewContext, ids: readonly number[]): HTMLElement {
  const holder = h("span", { class: "room-names" }, ids.map((id) => `room ${id}`).join(", "));
  void loadRooms(context.api).then(
    (rooms) => {
      const known = byId(rooms);
      holder.textContent = ids.map((id) => roomName(known, id)).join(", ");
    },
    () => undefined,
  );
  return holder;
}

/** Loads a webhook for a page; renders why not when it cannot. */
export async function loadWebhook(context: ViewContext, id: number): Promise<Webhook | undefined> {
  try {
    const { data } = await context.api("GET /api/admin/webhooks/{id}", { id });
    return data;
  } catch (error) {
    if (isStatus(error, 403, "enterprise_required")) {
      context.root.append(actions.enterpriseNotice());
      return undefined;
    }
    const message = isStatus(error, 404) ? `There is no webhook ${id}.` : context.fail(error);
    if (message !== undefined) context.root.append(h("p", { class: "error" }, message));
    return undefined;
  }
}

/** The delivery log's filters, read from and written to the page address (`?status=&event=`). */
interface LogFilters {
  status: DeliveryStatus | "";
  event: DeliverableEvent | "";
}

function filtersFromUrl(): LogFilters {
  const query = new URLSearchParams(location.search);
  const status = query.get("status") ?? "";
  const event = query.get("event") ?? "";
  return {
    status: (STATUSES as string[]).includes(status) ? (status as DeliveryStatus) : "",
    event: (LOG_EVENTS as string[]).includes(event) ? (event as DeliverableEvent) : "",
  };
}

function filtersToUrl(filters: LogFilters): void {
  const query = new URLSearchParams();
  if (filters.status !== "") query.set("status", filters.status);
  if (filters.event !== "") query.set("event", filters.event);
  const search = query.size > 0 ? `?${query}` : "";
  // Replace, not push: each filter change is not a page of its own in the history.
  if (search !== location.search) history.replaceState(null, "", `${location.pathname}${search}`);
}

export const webhookDetailView: View = async (context, [idText]) => {
  const id = Number(idText);
  const { root } = context;
  root.append(h("p", { class: "crumbs" }, link("/admin/webhooks", "← Outbound webhooks")));
  const webhook = await loadWebhook(context, id);
  if (!webhook) return;

  const reload = (): void => context.navigate(`/admin/webhooks/${id}`);
  const log = h("div", { id: "delivery-log" });
  const edit = h(
    "details",
    { class: "edit", id: "edit-endpoint" },
    h("summary", null, "Edit endpoint"),
    webhookForm(context, webhook),
  );
  root.append(h("h1", null, webhook.name));
  const reveal = actions.takeRevealedSecret(webhook.id);
  if (reveal) root.append(reveal);
  const because = disabledBecause(webhook);
  if (because !== null)
    root.append(h("p", { class: "banner", id: "disabled-reason", role: "note" }, because));
  const warning = failingWarning(webhook);
  if (warning !== null)
    root.append(h("p", { class: "banner", id: "failing-warning", role: "note" }, warning));
  root.append(
    details([
      ["URL", h("code", { class: "url" }, webhook.url)],
      [
        "Events",
        h(
          "ul",
          { class: "tags" },
          webhook.events.map((e) => h("li", null, e)),
        ),
      ],
      [
        "State",
        webhook.enabled || webhook.disabledAt === null
          ? [stateBadge(webhook)]
          : [stateBadge(webhook), " since ", time(webhook.disabledAt)],
      ],
      ["Signature scheme", h("code", null, webhook.signatureScheme)],
      ...(webhook.publicKey === null
        ? []
        : ([
            [
              "Public key",
              copyField("public-key", "Public key (verifies v1a signatures)", webhook.publicKey),
            ],
          ] as Array<[string, Child]>)),
      [
        "Ownership",
        h(
          "span",
          { id: "verification" },
          {
            not_required: "not checked",
            pending: "pending: nothing is sent until the receiver echoes the challenge",
            verified: "verified",
          }[webhook.verification],
        ),
      ],
      ["Payload format", h("code", null, webhook.payloadFormat)],
      ["Trace context", webhook.traceContext ? "traceparent sent" : "off"],
      [
        "Ordering",
        {
          none: "none",
          room: "per room: each room's events in order",
          endpoint: "whole endpoint: every event in order",
        }[webhook.ordering],
      ],
      ["Rooms", webhook.roomIds === null ? "every room" : roomNames(context, webhook.roomIds)],
      // Credentials come masked from the API.
      ["Authorization", authSummary(webhook)],
      [
        "Client certificate",
        webhook.tls === null
          ? "none"
          : [webhook.tls.subject, ", expires ", time(webhook.tls.expiresAt)],
      ],
      [
        "Custom headers",
        Object.keys(webhook.headers).length === 0
          ? "none"
          : h(
              "ul",
              { class: "tags" },
              Object.entries(webhook.headers).map(([name, masked]) =>
                h("li", null, `${name}: ${masked}`),
              ),
            ),
      ],
      [
        "Rate cap",
        webhook.maxDeliveriesPerSecond === null
          ? "none"
          : `${webhook.maxDeliveriesPerSecond} per second`,
      ],
      ["Created", time(webhook.createdAt)],
      ["Updated", time(webhook.updatedAt)],
    ]),
    h(
      "div",
      { class: "actions" },
      actions.toggleButton(context, webhook, reload),
      ...testEventControls(context, webhook, () => void showLog()),
      actions.verifyButton(context, webhook, () => void showLog()),
      actions.deleteButton(context, webhook, () => context.navigate("/admin/webhooks")),
    ),
    h("h2", null, "Health"),
    healthDetails(webhook),
    ...(webhook.ordering === "none" ? [] : [heldLanes(webhook)]),
    edit,
    rotateSecretPanel(context, webhook),
    recoverPanel(context, webhook),
    replayMissingPanel(context, webhook),
    h("h2", null, "Delivery log"),
    log,
  );

  const initial = filtersFromUrl();
  const statusFilter = h(
    "select",
    { id: "delivery-status", name: "status" },
    h("option", { value: "" }, "All statuses"),
    STATUSES.map((status) =>
      h("option", { value: status, selected: status === initial.status }, status),
    ),
  );
  const eventFilter = h(
    "select",
    { id: "delivery-event", name: "event" },
    h("option", { value: "" }, "All events"),
    LOG_EVENTS.map((event) =>
      h("option", { value: event, selected: event === initial.event }, event),
    ),
  );
  const refresh = h("button", { type: "button", class: "secondary" }, "Refresh");
  const live = h(
    "span",
    { class: "live muted", id: "log-live" },
    "Updates live as deliveries are attempted.",
  );
  const deliveries = table(
    ["Delivery", "Event", "Status", "Attempts", "Last response", "Created", "Next attempt"],
    [],
    { class: "data responsive", id: "deliveries" },
  );
  const list = pagedTable<DeliverySummary>(deliveries, {
    emptyText: "No deliveries match.",
    rowOf: (delivery) => deliveryRow(id, delivery),
    keyOf: (delivery) => String(delivery.id),
    fail: (error) => context.fail(error),
  });
  replaceChildren(
    log,
    h(
      "form",
      { class: "toolbar", role: "search", "aria-label": "Filter deliveries" },
      h("span", { class: "field" }, h("label", { for: "delivery-status" }, "Status"), statusFilter),
      h("span", { class: "field" }, h("label", { for: "delivery-event" }, "Event"), eventFilter),
      refresh,
      live,
    ),
    ...list.parts,
  );

  const filters = (): LogFilters => ({
    status: statusFilter.value as LogFilters["status"],
    event: eventFilter.value as LogFilters["event"],
  });
  const query = (filter: LogFilters) => ({
    id,
    limit: PAGE_SIZE,
    ...(filter.status === "" ? {} : { status: filter.status }),
    ...(filter.event === "" ? {} : { event: filter.event }),
  });
  let etag: string | undefined;

  /** Starts the log again from the newest delivery, with the filters in effect. */
  function showLog(): Promise<void> {
    const filter = filters();
    filtersToUrl(filter);
    etag = undefined;
    const pages = paginate(context.api, "GET /api/admin/webhooks/{id}/deliveries", query(filter));
    return busy(refresh, () => list.show(pages));
  }

  statusFilter.addEventListener("change", () => void showLog());
  eventFilter.addEventListener("change", () => void showLog());
  refresh.addEventListener("click", () => void showLog());
  await showLog();

  // Live: ask for the first page again every second; the ETag makes an unchanged answer a 304.
  pollWhileShown(
    root,
    async () => {
      const filter = filters();
      try {
        const { data, headers } = await context.api("GET /api/admin/webhooks/{id}/deliveries", {
          ...query(filter),
          headers: etag === undefined ? {} : { "if-none-match": etag },
        });
        if (filter.status !== filters().status || filter.event !== filters().event) return;
        etag = headers.etag;
        list.merge(data.items);
      } catch (error) {
        if (!notModified(error)) throw error;
      }
    },
    (error) => !isStatus(error, 401) || context.fail(error) !== undefined,
  );
};

function deliveryRow(webhookId: number, delivery: DeliverySummary): HTMLTableRowElement {
  return row(
    [
      link(`/admin/webhooks/${webhookId}/deliveries/${delivery.id}`, `#${delivery.id}`),
      h("code", null, delivery.event),
      deliveryBadge(delivery),
      attemptsOf(delivery),
      delivery.lastResponseStatus === null ? "—" : String(delivery.lastResponseStatus),
      time(delivery.createdAt),
      nextAttempt(delivery),
    ],
    {
      "data-delivery-id": delivery.id,
      "data-status": delivery.status,
      "data-held": delivery.held ? "true" : null,
    },
  );
}

export const deliveryView: View = async (context, [webhookIdText, deliveryIdText]) => {
  const webhookId = Number(webhookIdText);
  const deliveryId = Number(deliveryIdText);
  const { root } = context;
  root.append(
    h("p", { class: "crumbs" }, link(`/admin/webhooks/${webhookId}`, "← Webhook and delivery log")),
  );
  const ids = { id: webhookId, deliveryId };
  let delivery: DeliveryDetail;
  let etag: string | undefined;
  try {
    const answer = await context.api("GET /api/admin/webhooks/{id}/deliveries/{deliveryId}", ids);
    delivery = answer.data;
    etag = answer.headers.etag;
  } catch (error) {
    if (isStatus(error, 403, "enterprise_required")) {
      root.append(actions.enterpriseNotice());
      return;
    }
    const message = isStatus(error, 404)
      ? `There is no delivery ${deliveryId} of webhook ${webhookId}.`
      : context.fail(error);
    if (message !== undefined) root.append(h("p", { class: "error" }, message));
    return;
  }

  const redeliver = h("button", { type: "button" }, "Redeliver");
  redeliver.addEventListener("click", () =>
    busy(redeliver, async () => {
      try {
        const { data } = await context.api(
          "POST /api/admin/webhooks/{id}/deliveries/{deliveryId}/redeliver",
          ids,
        );
        context.flash(
          `Delivery ${deliveryId} queued again as delivery ${data.deliveryId}, with the same body.`,
        );
        context.navigate(`/admin/webhooks/${webhookId}/deliveries/${data.deliveryId}`);
      } catch (error) {
        flashFailure(context, error);
      }
    }),
  );

  const summary = h("div", { id: "delivery-summary" });
  const attempts = h("div", { id: "delivery-attempts" });
  const headers = h("div", { id: "delivery-headers" });
  const draw = (current: DeliveryDetail): void => {
    replaceChildren(
      summary,
      h(
        "p",
        { class: "banner state-sentence", id: "delivery-state", role: "note" },
        stateSentence(current),
      ),
      details([
        [
          "Endpoint",
          [
            link(`/admin/webhooks/${webhookId}`, current.webhookName),
            " ",
            h("code", { class: "url" }, current.webhookUrl),
          ],
        ],
        ["Event", h("code", null, current.event)],
        ["Event ID", h("code", { id: "delivery-event-id" }, current.eventId)],
        ["Status", h("span", { id: "delivery-status-badge" }, deliveryBadge(current))],
        ["Attempts", attemptsOf(current)],
        [
          "Last response",
          current.lastResponseStatus === null ? "—" : String(current.lastResponseStatus),
        ],
        ["Created", time(current.createdAt)],
        ["Updated", time(current.updatedAt)],
        ["Next attempt", h("span", { id: "delivery-next-attempt" }, nextAttempt(current))],
        ...redeliveryLinks(webhookId, current),
      ]),
    );
    replaceChildren(
      attempts,
      current.attemptHistory.length === 0
        ? h("p", { class: "empty" }, "No attempt yet.")
        : table(
            ["Attempt", "Started", "Duration", "Response", "Error", "Response body"],
            current.attemptHistory.map((attempt) =>
              row([
                String(attempt.attempt),
                time(attempt.startedAt),
                `${attempt.durationMs} ms`,
                attempt.responseStatus === null ? "—" : String(attempt.responseStatus),
                attempt.error === null ? "—" : h("span", { class: "error-text" }, attempt.error),
                attempt.responseBody === null || attempt.responseBody === ""
                  ? "—"
                  : h("pre", { class: "body" }, attempt.responseBody),
              ]),
            ),
            { class: "data responsive", id: "attempts" },
          ),
    );
    const focused = headers.contains(document.activeElement) ? document.activeElement!.id : "";
    replaceChildren(
      headers,
      current.attemptHistory.length === 0
        ? h("p", { class: "empty" }, "No attempt yet.")
        : current.attemptHistory
            .slice()
            .reverse()
            .map((attempt) => headerTabs(attempt)),
    );
    if (focused !== "") document.getElementById(focused)?.focus();
  };
  draw(delivery);

  root.append(
    h("h1", null, `Delivery ${delivery.id}`),
    summary,
    h("div", { class: "actions" }, redeliver),
    h("h2", null, "Payload"),
    h(
      "pre",
      { class: "json", id: "payload", tabindex: 0 },
      JSON.stringify(delivery.payload, null, 2),
    ),
    h("h2", null, "Attempts"),
    attempts,
    h("h2", null, "Headers"),
    headers,
  );

  // Live until the delivery is settled: SUCCESS, or EXHAUSTED (no attempt is left).
  const settled = (d: DeliveryDetail) => d.status === "SUCCESS" || d.status === "EXHAUSTED";
  if (settled(delivery)) return;
  pollWhileShown(
    root,
    async () => {
      try {
        const answer = await context.api("GET /api/admin/webhooks/{id}/deliveries/{deliveryId}", {
          ...ids,
          headers: etag === undefined ? {} : { "if-none-match": etag },
        });
        etag = answer.headers.etag;
        draw(answer.data);
        return !settled(answer.data);
      } catch (error) {
        if (notModified(error)) return true;
        throw error;
      }
    },
    (error) => !isStatus(error, 401) || context.fail(error) !== undefined,
  );
};

/** The delivery this one repeats, and those that repeat it, each a link with its status. */
function redeliveryLinks(webhookId: number, delivery: DeliveryDetail): [string, Child[]][] {
  const to = (id: number) => link(`/admin/webhooks/${webhookId}/deliveries/${id}`, `#${id}`);
  const pairs: [string, Child[]][] = [];
  if (delivery.redeliveryOf !== null)
    pairs.push(["Redelivery of", [h("span", { id: "redelivery-of" }, to(delivery.redeliveryOf))]]);
  if (delivery.redeliveries.length > 0)
    pairs.push([
      "Redelivered as",
      [
        h(
          "ul",
          { class: "tags", id: "redeliveries" },
          delivery.redeliveries.map((r) => h("li", null, to(r.id), " ", badge(r.status))),
        ),
      ],
    ]);
  return pairs;
}

/**
 * An ordered endpoint's lanes held by a failing delivery (at most 20, longest held first): nothing
 * later in the lane goes until that delivery succeeds or is exhausted.
 */
function heldLanes(webhook: Webhook): HTMLElement {
  return h(
    "section",
    { class: "held-lanes", "aria-labelledby": "held-lanes-title" },
    h("h2", { id: "held-lanes-title" }, "Held lanes"),
    webhook.heldLanes.length === 0
      ? h("p", { class: "muted" }, "None: no lane is waiting for a failing delivery.")
      : table(
          ["Lane", "Failing delivery", "Held since"],
          webhook.heldLanes.map((lane) =>
            row([
              lane.roomId === null
                ? webhook.ordering === "endpoint"
                  ? "whole endpoint"
                  : "events without a room"
                : `room #${lane.roomId}`,
              `#${lane.deliveryId}`,
              time(lane.since),
            ]),
          ),
          { class: "data" },
        ),
  );
}

/** How the endpoint authenticates to its receiver, in a line (credentials as the API masks them). */
function authSummary(webhook: Webhook): string {
  const auth = webhook.auth;
  if (auth === null) return "none";
  switch (auth.type) {
    case "basic":
      return `HTTP Basic, user ${auth.username}, password ${auth.password}`;
    case "bearer":
      return `bearer token ${auth.token}`;
    case "oauth2":
      return `OAuth 2.0 client ${auth.clientId} at ${auth.tokenUrl} (secret ${auth.clientSecret}${auth.scope === null ? "" : `, scope ${auth.scope}`})`;
  }
}
