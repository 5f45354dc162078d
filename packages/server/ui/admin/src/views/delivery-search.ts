import {
  EVENT_NAMES,
  WEBHOOK_TEST,
  type DeliverableEvent,
  type DeliverySearchItem,
  type DeliveryStatus,
  type SearchDeliveriesParams,
  type Webhook,
} from "@parley/client/browser";
import { isStatus, paginate } from "../api.js";
import { link, type View } from "../context.js";
import { badge, busy, h, row, table, time } from "../dom.js";
import { pagedTable } from "../paged-table.js";
import { localFromIso } from "./endpoint-operations.js";
import { enterpriseNotice } from "./webhook-actions.js";

const STATUSES: DeliveryStatus[] = ["PENDING", "SUCCESS", "FAILED", "EXHAUSTED"];
const LOG_EVENTS: DeliverableEvent[] = [...EVENT_NAMES, WEBHOOK_TEST];
const PAGE_SIZE = 25;
const ID = /^[1-9]\d{0,14}$/;

/** The search's filters, as kept in the page address (`/admin/deliveries?status=FAILED&...`). */
type Filters = Omit<SearchDeliveriesParams, "limit" | "cursor">;

function filtersFromUrl(): Filters {
  const query = new URLSearchParams(location.search);
  const filters: Filters = {};
  const id = (name: string) => {
    const value = query.get(name) ?? "";
    return ID.test(value) ? Number(value) : undefined;
  };
  const instant = (name: string) => {
    const value = query.get(name) ?? "";
    return value !== "" && !Number.isNaN(Date.parse(value))
      ? new Date(value).toISOString()
      : undefined;
  };
  const webhookId = id("webhookId");
  if (webhookId !== undefined) filters.webhookId = webhookId;
  const status = query.get("status") ?? "";
  if ((STATUSES as string[]).includes(status)) filters.status = status as DeliveryStatus;
  const event = query.get("event") ?? "";
  if ((LOG_EVENTS as string[]).includes(event)) filters.event = event as DeliverableEvent;
  const eventId = (query.get("eventId") ?? "").trim();
  if (eventId !== "" && eventId.length <= 64) filters.eventId = eventId;
  const roomId = id("roomId");
  if (roomId !== undefined) filters.roomId = roomId;
  const messageId = id("messageId");
  if (messageId !== undefined) filters.messageId = messageId;
  const since = instant("since");
  if (since !== undefined) filters.since = since;
  const until = instant("until");
  if (until !== undefined) filters.until = until;
  return filters;
}

function filtersToUrl(filters: Filters): void {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (value !== undefined && value !== "") query.set(name, String(value));
  }
  const search = query.size > 0 ? `?${query}` : "";
  if (search !== location.search) history.replaceState(null, "", `${location.pathname}${search}`);
}

/** `/admin/deliveries`: every endpoint's deliveries, newest first, filtered. */
export const deliverySearchView: View = async (context) => {
  const { root } = context;
  root.append(h("h1", null, "Delivery search"));
  let webhooks: Webhook[];
  try {
    webhooks = await paginate.all(context.api, "GET /api/admin/webhooks", { limit: 200 });
  } catch (error) {
    if (isStatus(error, 403, "enterprise_required")) {
      root.append(enterpriseNotice());
      return;
    }
    const message = context.fail(error);
    if (message !== undefined) root.append(h("p", { class: "error" }, message));
    return;
  }
  const initial = filtersFromUrl();

  const field = (control: HTMLElement & { id: string }, label: string) =>
    h("span", { class: "field" }, h("label", { for: control.id }, label), control);
  const select = (id: string, all: string, values: [string, string][], current?: string) =>
    h(
      "select",
      { id, name: id.replace(/^search-/, "") },
      h("option", { value: "" }, all),
      values.map(([value, label]) => h("option", { value, selected: value === current }, label)),
    );
  const webhook = select(
    "search-webhookId",
    "All endpoints",
    webhooks.map((w) => [String(w.id), `${w.name} (#${w.id})`]),
    initial.webhookId === undefined ? undefined : String(initial.webhookId),
  );
  const status = select(
    "search-status",
    "All statuses",
    STATUSES.map((s) => [s, s]),
    initial.status,
  );
  const event = select(
    "search-event",
    "All events",
    LOG_EVENTS.map((e) => [e, e]),
    initial.event,
  );
  const text = (id: string, value: string | number | undefined, attributes = {}) =>
    h("input", {
      id,
      name: id.replace(/^search-/, ""),
      autocomplete: "off",
      value: value === undefined ? undefined : String(value),
      ...attributes,
    });
  const eventId = text("search-eventId", initial.eventId, {
    placeholder: "evt_…",
    spellcheck: "false",
  });
  const roomId = text("search-roomId", initial.roomId, { inputmode: "numeric" });
  const messageId = text("search-messageId", initial.messageId, { inputmode: "numeric" });
  const since = h("input", {
    id: "search-since",
    name: "since",
    type: "datetime-local",
    value: initial.since === undefined ? undefined : localFromIso(initial.since),
  });
  const until = h("input", {
    id: "search-until",
    name: "until",
    type: "datetime-local",
    value: initial.until === undefined ? undefined : localFromIso(initial.until),
  });
  const submit = h("button", { type: "submit" }, "Search");
  const clear = h("button", { type: "reset", class: "secondary" }, "Clear");
  const form = h(
    "form",
    { class: "search-form card", role: "search", "aria-label": "Search deliveries" },
    field(webhook, "Endpoint"),
    field(status, "Status"),
    field(event, "Event"),
    field(eventId, "Event ID"),
    field(roomId, "Room ID"),
    field(messageId, "Message ID"),
    field(since, "Queued from (local time)"),
    field(until, "Queued before (local time)"),
    h("div", { class: "buttons" }, submit, clear),
  );
  const results = table(
    ["Delivery", "Endpoint", "Event", "Status", "Attempts", "Last response", "Created", "Event ID"],
    [],
    { class: "data responsive", id: "search-results" },
  );
  const list = pagedTable<DeliverySearchItem>(results, {
    emptyText: "No deliveries match.",
    rowOf: (d) =>
      row(
        [
          link(`/admin/webhooks/${d.webhookId}/deliveries/${d.id}`, `#${d.id}`),
          link(`/admin/webhooks/${d.webhookId}`, d.webhookName),
          h("code", null, d.event),
          badge(d.status),
          String(d.attempts),
          d.lastResponseStatus === null ? "—" : String(d.lastResponseStatus),
          time(d.createdAt),
          h("code", { class: "event-id" }, d.eventId),
        ],
        { "data-delivery-id": d.id, "data-status": d.status },
      ),
    keyOf: (d) => String(d.id),
    fail: (error) => context.fail(error),
  });
  const holder = h("div", { id: "search-holder", "aria-live": "polite" }, ...list.parts);
  root.append(form, holder);

  const read = (): Filters => {
    const filters: Filters = {};
    if (webhook.value !== "") filters.webhookId = Number(webhook.value);
    if (status.value !== "") filters.status = status.value as DeliveryStatus;
    if (event.value !== "") filters.event = event.value as DeliverableEvent;
    if (eventId.value.trim() !== "") filters.eventId = eventId.value.trim();
    if (ID.test(roomId.value.trim())) filters.roomId = Number(roomId.value.trim());
    if (ID.test(messageId.value.trim())) filters.messageId = Number(messageId.value.trim());
    if (since.value !== "") filters.since = new Date(since.value).toISOString();
    if (until.value !== "") filters.until = new Date(until.value).toISOString();
    return filters;
  };
  const search = (filters: Filters): Promise<void> => {
    filtersToUrl(filters);
    return busy(submit, () =>
      list.show(
        paginate(context.api, "GET /api/admin/deliveries", { ...filters, limit: PAGE_SIZE }),
      ),
    );
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void search(read());
  });
  form.addEventListener("reset", () => {
    // After the browser empties the fields (the reset's default action).
    setTimeout(() => void search(read()));
  });
  // The address's filters as given (an exact `since` is kept to the second, not cut to minutes).
  await search(initial);
};
