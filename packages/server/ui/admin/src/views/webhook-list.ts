// The outbound webhooks page: every endpoint with its state, health (with its 7-day trend) and
// actions, then "Add endpoint", which opens the form to create one.
import { EVENT_NAMES, type Webhook } from "@parley/client/browser";
import { isStatus, paginate } from "../api.js";
import { link, type View, type ViewContext } from "../context.js";
import { h, replaceChildren, row, table } from "../dom.js";
import * as actions from "./webhook-actions.js";
import { webhookForm } from "./webhook-form.js";
import { autoDisabledBanner, healthCell, stateBadge, trendChart } from "./webhook-health.js";

/** The subscribed events as tags: a few by name, then how many more. */
function eventTags(events: readonly string[]): HTMLElement {
  if (events.includes("*")) return h("span", { class: "muted" }, "all events, later ones too");
  if (events.length === EVENT_NAMES.length) return h("span", { class: "muted" }, "all events");
  const shown = events.length > 3 ? events.slice(0, 2) : events;
  return h(
    "ul",
    { class: "tags", title: events.join(", ") },
    shown.map((event) => h("li", null, event)),
    shown.length < events.length ? h("li", { class: "more" }, `+${events.length - 2} more`) : null,
  );
}

export const webhooksView: View = async (context) => {
  const { root } = context;
  root.append(
    h("h1", null, "Outbound webhooks"),
    h("p", { class: "crumbs" }, link("/admin/deliveries", "Search deliveries across endpoints →")),
  );
  const reveal = actions.takeRevealedSecret();
  if (reveal) root.append(reveal);
  const listHolder = h("div", { class: "list", "aria-live": "polite" }, h("p", null, "Loading…"));
  root.append(listHolder);

  let webhooks: Webhook[];
  try {
    webhooks = await paginate.all(context.api, "GET /api/admin/webhooks", { limit: 200 });
  } catch (error) {
    if (isStatus(error, 403, "enterprise_required")) {
      replaceChildren(listHolder, actions.enterpriseNotice());
      return;
    }
    const message = context.fail(error);
    if (message !== undefined) replaceChildren(listHolder, h("p", { class: "error" }, message));
    return;
  }

  const refresh = (): void => context.navigate("/admin/webhooks");
  const banner = autoDisabledBanner(webhooks);
  if (banner) listHolder.before(banner);
  if (webhooks.length === 0) {
    replaceChildren(listHolder, h("p", { class: "empty" }, "No webhooks yet: add one below."));
  } else {
    replaceChildren(
      listHolder,
      table(
        ["Name", "URL", "Events", "State", "Health", "Actions"],
        webhooks.map((webhook) =>
          row(
            [
              link(`/admin/webhooks/${webhook.id}`, webhook.name),
              h("code", { class: "url" }, webhook.url),
              eventTags(webhook.events),
              stateBadge(webhook),
              h(
                "span",
                { class: "health-cell" },
                healthCell(webhook),
                h("span", { class: "trend muted" }, "…"),
              ),
              h(
                "span",
                { class: "actions" },
                actions.toggleButton(context, webhook, refresh),
                actions.testButton(context, webhook),
                actions.deleteButton(context, webhook, refresh),
              ),
            ],
            { "data-webhook-id": webhook.id },
          ),
        ),
        { id: "webhooks", class: "data responsive" },
      ),
    );
  }

  root.append(addEndpoint(context, webhooks.length === 0));
  void drawTrends(context, webhooks);
};

/**
 * "Add endpoint": the form opens under the button when asked for (and at once on an empty list,
 * where adding one is the only thing to do); Cancel or Escape closes it again.
 */
function addEndpoint(context: ViewContext, open: boolean): HTMLElement {
  const button = h(
    "button",
    {
      type: "button",
      id: "add-endpoint",
      "aria-expanded": "false",
      "aria-controls": "add-endpoint-panel",
    },
    "Add endpoint",
  );
  const panel = h("div", { id: "add-endpoint-panel", hidden: true });
  const close = (): void => {
    panel.hidden = true;
    panel.replaceChildren();
    button.hidden = false;
    button.setAttribute("aria-expanded", "false");
    button.focus();
  };
  const show = (focus: boolean): void => {
    const form = webhookForm(context);
    const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
    cancel.addEventListener("click", close);
    form.querySelector(".buttons")?.append(cancel);
    panel.replaceChildren(form);
    panel.hidden = false;
    button.hidden = true;
    button.setAttribute("aria-expanded", "true");
    if (focus) form.querySelector<HTMLInputElement>("input")?.focus();
  };
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !(event.target instanceof HTMLSelectElement)) close();
  });
  button.addEventListener("click", () => show(true));
  if (open) show(false);
  return h("div", { class: "add-endpoint" }, button, panel);
}

/** Each endpoint's 7-day trend, drawn into its row as the answers come in. */
async function drawTrends(context: ViewContext, webhooks: readonly Webhook[]): Promise<void> {
  await Promise.all(
    webhooks.map(async (webhook) => {
      const cell = context.root.querySelector(`tr[data-webhook-id="${webhook.id}"] .trend`);
      if (!cell) return;
      try {
        const { data } = await context.api("GET /api/admin/webhooks/{id}/health", {
          id: webhook.id,
        });
        cell.replaceWith(trendChart(data, webhook.name));
      } catch {
        cell.textContent = "—";
      }
    }),
  );
}
