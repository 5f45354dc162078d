import type { DeliveryStatus, DeliverySummary, Webhook } from "../../../../client/src/types/api.js";
import { isStatus, paginate } from "../api.js";
import { link, type View, type ViewContext } from "../context.js";
import { badge, busy, details, h, replaceChildren, row, table, time } from "../dom.js";
import { pagedTable } from "../paged-table.js";
import { deleteButton, enterpriseNotice, testButton, toggleButton } from "./webhooks.js";

const STATUSES: DeliveryStatus[] = ["PENDING", "SUCCESS", "FAILED", "EXHAUSTED"];
const PAGE_SIZE = 25;

/** Loads a webhook for a page; renders why not when it cannot. */
export async function loadWebhook(context: ViewContext, id: number): Promise<Webhook | undefined> {
  try {
    const { data } = await context.api("GET /api/admin/webhooks/{id}", { id });
    return data;
  } catch (error) {
    if (isStatus(error, 403, "enterprise_required")) {
      context.root.append(enterpriseNotice());
      return undefined;
    }
    const message = isStatus(error, 404) ? `There is no webhook ${id}.` : context.fail(error);
    if (message !== undefined) context.root.append(h("p", { class: "error" }, message));
    return undefined;
  }
}

export const webhookDetailView: View = async (context, [idText]) => {
  const id = Number(idText);
  const { root } = context;
  root.append(h("p", { class: "crumbs" }, link("/admin/webhooks", "← Outbound webhooks")));
  const webhook = await loadWebhook(context, id);
  if (!webhook) return;

  const reload = (): void => context.navigate(`/admin/webhooks/${id}`);
  const log = h("div", { id: "delivery-log" });
  root.append(
    h("h1", null, webhook.name),
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
      ["State", webhook.enabled ? badge("enabled") : badge("disabled")],
      ["Created", time(webhook.createdAt)],
      ["Updated", time(webhook.updatedAt)],
    ]),
    h(
      "div",
      { class: "actions" },
      toggleButton(context, webhook, reload),
      testButton(context, webhook, () => void showLog()),
      deleteButton(context, webhook, () => context.navigate("/admin/webhooks")),
    ),
    h("h2", null, "Delivery log"),
    log,
  );

  const filter = h(
    "select",
    { id: "delivery-status", name: "status" },
    h("option", { value: "" }, "All statuses"),
    STATUSES.map((status) => h("option", { value: status }, status)),
  );
  const refresh = h("button", { type: "button", class: "secondary" }, "Refresh");
  const deliveries = table(
    ["Delivery", "Event", "Status", "Attempts", "Last response", "Created", "Next attempt"],
    [],
    { class: "data", id: "deliveries" },
  );
  const list = pagedTable<DeliverySummary>(deliveries, {
    emptyText: "No deliveries.",
    rowOf: (delivery) => deliveryRow(id, delivery),
    fail: (error) => context.fail(error),
  });
  replaceChildren(
    log,
    h(
      "div",
      { class: "toolbar" },
      h("label", { for: "delivery-status" }, "Status"),
      filter,
      refresh,
    ),
    ...list.parts,
  );

  /** Starts the log again from the newest delivery, with the filter in effect. */
  function showLog(): Promise<void> {
    const status = filter.value as DeliveryStatus | "";
    const pages = paginate(context.api, "GET /api/admin/webhooks/{id}/deliveries", {
      id,
      limit: PAGE_SIZE,
      ...(status === "" ? {} : { status }),
    });
    return busy(refresh, () => list.show(pages));
  }

  filter.addEventListener("change", () => void showLog());
  refresh.addEventListener("click", () => void showLog());
  await showLog();
};

function deliveryRow(webhookId: number, delivery: DeliverySummary): HTMLTableRowElement {
  return row(
    [
      link(`/admin/webhooks/${webhookId}/deliveries/${delivery.id}`, `#${delivery.id}`),
      h("code", null, delivery.event),
      badge(delivery.status),
      String(delivery.attempts),
      delivery.lastResponseStatus === null ? "—" : String(delivery.lastResponseStatus),
      time(delivery.createdAt),
      time(delivery.nextAttemptAt),
    ],
    { "data-delivery-id": delivery.id, "data-status": delivery.status },
  );
}

export const deliveryView: View = async (context, [webhookIdText, deliveryIdText]) => {
  const webhookId = Number(webhookIdText);
  const deliveryId = Number(deliveryIdText);
  const { root } = context;
  root.append(
    h("p", { class: "crumbs" }, link(`/admin/webhooks/${webhookId}`, "← Webhook and delivery log")),
  );
  let delivery;
  try {
    ({ data: delivery } = await context.api(
      "GET /api/admin/webhooks/{id}/deliveries/{deliveryId}",
      { id: webhookId, deliveryId },
    ));
  } catch (error) {
    if (isStatus(error, 403, "enterprise_required")) {
      root.append(enterpriseNotice());
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
          { id: webhookId, deliveryId },
        );
        context.flash(
          `Delivery ${deliveryId} queued again as delivery ${data.deliveryId}, with the same body.`,
        );
        context.navigate(`/admin/webhooks/${webhookId}/deliveries/${data.deliveryId}`);
      } catch (error) {
        const message = context.fail(error);
        if (message !== undefined) context.flash(message, "error");
      }
    }),
  );

  root.append(
    h("h1", null, `Delivery ${delivery.id}`),
    details([
      ["Event", h("code", null, delivery.event)],
      ["Status", badge(delivery.status)],
      ["Attempts", String(delivery.attempts)],
      [
        "Last response",
        delivery.lastResponseStatus === null ? "—" : String(delivery.lastResponseStatus),
      ],
      ["Created", time(delivery.createdAt)],
      ["Updated", time(delivery.updatedAt)],
      ["Next attempt", time(delivery.nextAttemptAt)],
    ]),
    h("div", { class: "actions" }, redeliver),
    h("h2", null, "Payload"),
    h("pre", { class: "json", id: "payload" }, JSON.stringify(delivery.payload, null, 2)),
    h("h2", null, "Attempts"),
    delivery.attemptHistory.length === 0
      ? h("p", { class: "empty" }, "No attempt yet.")
      : table(
          ["Attempt", "Started", "Duration", "Response", "Error", "Response body"],
          delivery.attemptHistory.map((attempt) =>
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
          { class: "data", id: "attempts" },
        ),
  );
};
