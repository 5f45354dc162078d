import {
  inboundWebhookAddresses,
  type InboundWebhook,
  type InboundWebhookAddresses,
  type InboundWebhookWithToken,
  type Room,
} from "@parley/client/browser";
import { paginate } from "../api.js";
import { byId, loadRooms, roomName } from "../rooms.js";
import {
  clearError,
  errorBox,
  flashFailure,
  showError,
  type View,
  type ViewContext,
} from "../context.js";
import {
  badge,
  busy,
  confirmButton,
  copyField,
  h,
  replaceChildren,
  row,
  table,
  time,
} from "../dom.js";

/**
 * The ingest URL of a webhook just created or rotated. Kept in memory only, for the one page
 * that shows it: leaving the page or reloading drops it, as the API never answers it again.
 */
let revealed: InboundWebhookWithToken | undefined;

export const inboundView: View = async (context) => {
  const { root } = context;
  root.append(h("h1", null, "Inbound webhooks"));
  if (revealed) {
    root.append(revealPanel(revealed));
    revealed = undefined;
  }
  const listHolder = h("div", { class: "list" }, h("p", null, "Loading…"));
  const rooms = loadRooms(context.api);
  root.append(listHolder);
  root.append(createForm(context, rooms));
  root.append(senderSetup());

  let webhooks: InboundWebhook[];
  let names: Map<number, Room>;
  try {
    [webhooks, names] = await Promise.all([
      paginate.all(context.api, "GET /api/admin/inbound-webhooks", { limit: 200 }),
      rooms.then(byId),
    ]);
  } catch (error) {
    const message = context.fail(error);
    if (message !== undefined) replaceChildren(listHolder, h("p", { class: "error" }, message));
    return;
  }
  if (webhooks.length === 0) {
    replaceChildren(listHolder, h("p", { class: "empty" }, "No inbound webhooks yet."));
    return;
  }
  replaceChildren(
    listHolder,
    table(
      ["ID", "Room", "Display name", "State", "Token", "Signing secret", "Created", "Actions"],
      webhooks.map((webhook) =>
        row(
          [
            String(webhook.id),
            roomName(names, webhook.roomId),
            h(
              "span",
              { class: "sender" },
              // No avatar image: the page loads images from Parley only (img-src 'self').
              h("span", { class: "display-name" }, webhook.displayName),
            ),
            webhook.enabled ? badge("enabled") : badge("disabled"),
            h(
              "code",
              { class: "token-hint", title: "the token's last 8 characters" },
              `…${webhook.tokenLast8}`,
            ),
            h(
              "span",
              { class: "signing-secret" },
              webhook.signingSecretSet ? badge("set", "enabled") : badge("not set", "none"),
            ),
            time(webhook.createdAt),
            h("span", { class: "actions" }, actions(context, webhook)),
          ],
          { "data-inbound-id": webhook.id },
        ),
      ),
      { id: "inbound-webhooks", class: "data responsive" },
    ),
    h(
      "section",
      { id: "inbound-addresses", "aria-labelledby": "inbound-addresses-title" },
      h("h2", { id: "inbound-addresses-title" }, "Addresses and signing secrets"),
      ...webhooks.map((webhook) => webhookSetup(context, webhook, roomName(names, webhook.roomId))),
    ),
  );
};

function actions(context: ViewContext, webhook: InboundWebhook): HTMLElement[] {
  const reload = (): void => context.navigate("/admin/inbound");
  const toggle = h(
    "button",
    { type: "button", class: "secondary" },
    webhook.enabled ? "Disable" : "Enable",
  );
  toggle.addEventListener("click", () =>
    busy(toggle, async () => {
      try {
        const { data } = await context.api("PATCH /api/admin/inbound-webhooks/{id}", {
          id: webhook.id,
          enabled: !webhook.enabled,
        });
        context.flash(
          `Inbound webhook “${data.displayName}” ${data.enabled ? "enabled" : "disabled"}.`,
        );
        reload();
      } catch (error) {
        flashFailure(context, error);
      }
    }),
  );
  const rotate = confirmButton(
    "Rotate token",
    "The current URL stops working at once. Rotate?",
    async () => {
      try {
        const { data } = await context.api("POST /api/admin/inbound-webhooks/{id}/rotate-token", {
          id: webhook.id,
        });
        revealed = data;
        context.flash(`New token for “${data.displayName}”: the old URL no longer works.`);
        reload();
      } catch (error) {
        flashFailure(context, error);
      }
    },
  );
  const remove = confirmButton("Delete", "Delete this inbound webhook?", async () => {
    try {
      await context.api("DELETE /api/admin/inbound-webhooks/{id}", { id: webhook.id });
      context.flash(`Inbound webhook “${webhook.displayName}” deleted.`);
      reload();
    } catch (error) {
      flashFailure(context, error);
    }
  });
  return [toggle, rotate, remove];
}

/** The placeholder the list shows where the token goes: the page never learns a token again. */
const TOKEN_PLACEHOLDER = "<token>";

/** One entry per sender format: the field's id suffix, its label and what it takes. */
const ADDRESS_KINDS: Array<{
  key: keyof InboundWebhookAddresses;
  id: string;
  label: string;
  hint: () => Array<string | HTMLElement>;
}> = [
  {
    key: "url",
    id: "ingest-url",
    label: "Ingest URL",
    hint: () => ["For Parley's own format: ", h("code", null, '{"content": "…"}'), "."],
  },
  {
    key: "slackUrl",
    id: "slack-url",
    label: "Slack-compatible URL",
    hint: () => [
      "For tools that post Slack incoming-webhook payloads: ",
      h("code", null, '{"text": "…"}'),
      " (with attachments or blocks).",
    ],
  },
  {
    key: "discordUrl",
    id: "discord-url",
    label: "Discord-compatible URL",
    hint: () => [
      "For tools with a Discord webhook setting and bots built on discord.js: ",
      h("code", null, '{"content": "…", "embeds": […]}'),
      ".",
    ],
  },
  {
    key: "githubUrl",
    id: "github-url",
    label: "GitHub URL",
    hint: () => ["The Payload URL of a GitHub webhook (see Setting up GitHub below)."],
  },
  {
    key: "stripeUrl",
    id: "stripe-url",
    label: "Stripe URL",
    hint: () => ["The endpoint URL of a Stripe webhook (see Setting up Stripe below)."],
  },
];

function addressFields(addresses: InboundWebhookAddresses, idPrefix = ""): HTMLElement[] {
  return ADDRESS_KINDS.flatMap(({ key, id, label, hint }) => [
    copyField(`${idPrefix}${id}`, label, addresses[key]),
    h("p", { class: "hint", id: `${idPrefix}${id}-hint` }, ...hint()),
  ]);
}

/**
 * One listed webhook's addresses, with a placeholder for its token (shown only on create and
 * rotate) and this webhook's id where Discord's needs it, and its signing secret form.
 */
function webhookSetup(context: ViewContext, webhook: InboundWebhook, room: string): HTMLElement {
  const addresses = inboundWebhookAddresses(window.location.origin, {
    id: webhook.id,
    token: TOKEN_PLACEHOLDER,
  });
  return h(
    "details",
    { class: "edit webhook-setup", id: `inbound-${webhook.id}-setup` },
    h(
      "summary",
      null,
      `${webhook.displayName} (webhook ${webhook.id}, ${room}): signing secret `,
      webhook.signingSecretSet ? "set" : "not set",
    ),
    h(
      "div",
      { class: "card" },
      h(
        "p",
        { class: "hint" },
        `Replace ${TOKEN_PLACEHOLDER} with the webhook's token, shown when it was created or its `,
        "token last rotated (rotate to get a new one).",
      ),
      ...addressFields(addresses, `inbound-${webhook.id}-`),
      signingSecretForm(context, webhook),
    ),
  );
}

/** Sets or removes the secret GitHub and Stripe sign with; the API never shows it back. */
function signingSecretForm(context: ViewContext, webhook: InboundWebhook): HTMLElement {
  const id = `inbound-${webhook.id}-secret`;
  const error = errorBox(`${id}-error`);
  const input = h("input", {
    id,
    type: "password",
    autocomplete: "off",
    minlength: "16",
    maxlength: "1024",
  });
  const save = h("button", { type: "submit" }, "Save secret");
  const buttons = h("div", { class: "buttons" }, save);
  const send = (signingSecret: string | null, button: HTMLButtonElement) =>
    busy(button, async () => {
      clearError(error);
      try {
        await context.api("PATCH /api/admin/inbound-webhooks/{id}", {
          id: webhook.id,
          signingSecret,
        });
        context.flash(
          signingSecret === null
            ? `Signing secret of “${webhook.displayName}” removed.`
            : `Signing secret of “${webhook.displayName}” set.`,
        );
        context.navigate("/admin/inbound");
      } catch (failure) {
        showError(error, context.fail(failure));
      }
    });
  if (webhook.signingSecretSet) {
    const remove = h("button", { type: "button", class: "secondary" }, "Remove secret");
    remove.addEventListener("click", () => void send(null, remove));
    buttons.append(remove);
  }
  const form = h(
    "form",
    { class: "signing-secret-form", novalidate: true },
    error,
    h("label", { for: id }, webhook.signingSecretSet ? "New signing secret" : "Signing secret"),
    input,
    h(
      "p",
      { class: "hint" },
      "16 to 1024 characters. GitHub: the same secret you give GitHub. Stripe: the endpoint's ",
      "signing secret (whsec_…) from Stripe.",
    ),
    buttons,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void send(input.value, save);
  });
  return form;
}

/** Where the GitHub and Stripe addresses and the signing secret go in their settings. */
function senderSetup(): HTMLElement {
  const steps = (...items: Array<string | HTMLElement | Array<string | HTMLElement>>) =>
    h("ol", null, ...items.map((item) => h("li", null, ...[item].flat())));
  return h(
    "section",
    { id: "sender-setup", class: "card", "aria-labelledby": "sender-setup-title" },
    h("h2", { id: "sender-setup-title" }, "Setting up GitHub and Stripe"),
    h("h3", null, "Setting up GitHub"),
    steps(
      "Choose a signing secret of 16 characters or more and set it on the inbound webhook (Signing secret, above).",
      "In the repository (or organization) on GitHub: Settings → Webhooks → Add webhook.",
      ["Payload URL: the webhook's ", h("strong", null, "GitHub URL"), "."],
      "Content type: application/json (application/x-www-form-urlencoded works too).",
      "Secret: the same signing secret.",
      "Choose the events to send (pushes, pull requests, issues, releases, workflow runs…), then Add webhook. GitHub's ping is answered 204 and posts nothing.",
    ),
    h("h3", null, "Setting up Stripe"),
    steps(
      "In the Stripe Dashboard: Developers → Webhooks → Add endpoint (Workbench: Event destinations).",
      ["Endpoint URL: the webhook's ", h("strong", null, "Stripe URL"), "."],
      "Select the events to send (payments, refunds, disputes, checkout, invoices, subscriptions…) and add the endpoint.",
      "Reveal the endpoint's signing secret (whsec_…) in Stripe and set it as the inbound webhook's signing secret (Signing secret, above).",
    ),
    h(
      "p",
      { class: "hint" },
      "With a signing secret set, unsigned or wrongly signed requests to these two addresses answer 401; without one they are taken on the token alone.",
    ),
  );
}

function revealPanel(webhook: InboundWebhookWithToken): HTMLElement {
  const panel = h(
    "section",
    { class: "reveal", id: "token-reveal", "aria-labelledby": "token-reveal-title" },
    h("h2", { id: "token-reveal-title" }, `Ingest URLs of “${webhook.displayName}”`),
    h(
      "p",
      { class: "warning" },
      "This is the only time the URLs are shown: copy them now. The token in them is the only ",
      `credential, so anyone who has it can post to its room. Store it like a `,
      "password; if it leaks, rotate the token.",
    ),
    ...addressFields(webhook),
  );
  const done = h("button", { type: "button", class: "secondary" }, "I have stored it");
  done.addEventListener("click", () => panel.remove());
  panel.append(h("div", { class: "buttons" }, done));
  return panel;
}

function createForm(context: ViewContext, rooms: Promise<Room[]>): HTMLElement {
  const error = errorBox("inbound-form-error");
  const roomId = h(
    "select",
    { id: "inbound-room", name: "roomId", required: true },
    h("option", { value: "" }, "Loading the rooms…"),
  );
  void rooms.then(
    (loaded) =>
      roomId.replaceChildren(
        h("option", { value: "" }, loaded.length === 0 ? "No room yet" : "Choose a room"),
        ...loaded.map((room) => h("option", { value: room.id }, room.name ?? `room ${room.id}`)),
      ),
    () => roomId.replaceChildren(h("option", { value: "" }, "The rooms could not be loaded")),
  );
  const displayName = h("input", { id: "inbound-name", name: "displayName", autocomplete: "off" });
  const avatarUrl = h("input", {
    id: "inbound-avatar",
    name: "avatarUrl",
    type: "url",
    placeholder: "https://… (optional)",
    autocomplete: "off",
  });
  const submit = h("button", { type: "submit" }, "Create inbound webhook");
  const form = h(
    "form",
    {
      id: "inbound-form",
      class: "card",
      novalidate: true,
      "aria-labelledby": "inbound-form-title",
    },
    h("h2", { id: "inbound-form-title" }, "New inbound webhook"),
    error,
    h("label", { for: "inbound-room" }, "Room"),
    roomId,
    h("label", { for: "inbound-name" }, "Display name"),
    displayName,
    h("label", { for: "inbound-avatar" }, "Avatar URL"),
    avatarUrl,
    h("div", { class: "buttons" }, submit),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    const room = Number(roomId.value);
    if (roomId.value === "" || !Number.isInteger(room) || room < 1) {
      showError(error, "Choose the room it posts to.");
      return;
    }
    void busy(submit, async () => {
      try {
        const avatar = avatarUrl.value.trim();
        const { data } = await context.api("POST /api/admin/inbound-webhooks", {
          roomId: room,
          displayName: displayName.value,
          ...(avatar === "" ? {} : { avatarUrl: avatar }),
        });
        revealed = data;
        context.flash(`Inbound webhook “${data.displayName}” created.`);
        context.navigate("/admin/inbound");
      } catch (failure) {
        showError(error, context.fail(failure));
      }
    });
  });
  return form;
}
