// The endpoint form: create one (on the list) or edit one (on its page), with its secret, events
// (described from the catalogue), signature scheme, ordering, payload format, trace context, room
// filter, rate cap, custom headers and receiver credentials (auth, client certificate).
import {
  EVENT_NAMES,
  type EventSubscription,
  type EventType,
  type Ordering,
  type PayloadFormat,
  type SignatureScheme,
  type UpdateWebhookParams,
  type Webhook,
} from "@parley/client/browser";
import { clearError, errorBox, showError, type ViewContext } from "../context.js";
import { busy, h } from "../dom.js";
import { credentialFields } from "./endpoint-credentials-fields.js";
import { loadRooms } from "../rooms.js";
import { roomPicker } from "./room-picker.js";
import { revealSecret } from "./webhook-actions.js";

/**
 * `whsec_` and 32 random bytes in base64 (Standard Webhooks' format, which the API requires of a
 * `whsec_` secret), as `parley webhooks create` and rotate-secret generate.
 */
function generateSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/**
 * The endpoint form: empty to create one, filled in to edit `existing` (every field; the secret is
 * write-only, so it is empty and left unchanged unless a new one is typed or generated).
 */
export function webhookForm(context: ViewContext, existing?: Webhook): HTMLElement {
  const editing = existing !== undefined;
  const prefix = editing ? "edit" : "webhook";
  const error = errorBox(`${prefix}-form-error`);
  const name = h("input", {
    id: `${prefix}-name`,
    name: "name",
    autocomplete: "off",
    maxlength: 200,
    value: existing?.name,
    required: true,
  });
  const url = h("input", {
    id: `${prefix}-url`,
    name: "url",
    type: "url",
    placeholder: "https://example.com/parley",
    autocomplete: "off",
    value: existing?.url,
    required: true,
  });
  const secret = h("input", {
    id: `${prefix}-secret`,
    name: "secret",
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": `${prefix}-secret-hint`,
    ...(editing ? { placeholder: "unchanged" } : { required: true }),
  });
  const generate = h(
    "button",
    { type: "button", class: "secondary", "aria-controls": secret.id },
    "Generate",
  );
  generate.addEventListener("click", () => {
    secret.value = generateSecret();
    secret.focus();
  });
  const enabled = h("input", {
    id: `${prefix}-enabled`,
    name: "enabled",
    type: "checkbox",
    checked: existing?.enabled ?? true,
  });
  const scheme = h(
    "select",
    { id: `${prefix}-signature-scheme`, name: "signatureScheme" },
    (
      [
        ["parley", "Parley: X-Webhook-Signature-256"],
        ["standard-webhooks", "Standard Webhooks: webhook-signature"],
        ["both", "Both sets of headers"],
        [
          "standard-webhooks-ed25519",
          "Standard Webhooks ed25519: webhook-signature v1a (a key pair Parley makes)",
        ],
      ] as const
    ).map(([value, label]) =>
      h("option", { value, selected: (existing?.signatureScheme ?? "parley") === value }, label),
    ),
  );
  // A new ed25519 endpoint needs no secret (Parley makes its key pair).
  if (!editing)
    scheme.addEventListener("change", () => {
      secret.required = scheme.value !== "standard-webhooks-ed25519";
    });
  const ordering = h(
    "select",
    {
      id: `${prefix}-ordering`,
      name: "ordering",
      "aria-describedby": `${prefix}-ordering-hint`,
    },
    (
      [
        ["none", "None: in parallel, retries may come after later events"],
        ["room", "Per room: each room's events in order"],
        ["endpoint", "Whole endpoint: every event in order, one at a time"],
      ] as const
    ).map(([value, label]) =>
      h("option", { value, selected: (existing?.ordering ?? "none") === value }, label),
    ),
  );
  const format = h(
    "select",
    {
      id: `${prefix}-payload-format`,
      name: "payloadFormat",
      "aria-describedby": `${prefix}-payload-format-hint`,
    },
    (
      [
        ["parley", "Parley envelope"],
        ["cloudevents", "CloudEvents, structured (application/cloudevents+json)"],
        ["cloudevents-binary", "CloudEvents, binary (ce-* headers)"],
      ] as const
    ).map(([value, label]) =>
      h("option", { value, selected: (existing?.payloadFormat ?? "parley") === value }, label),
    ),
  );
  const traceContext = h("input", {
    id: `${prefix}-trace-context`,
    name: "traceContext",
    type: "checkbox",
    checked: existing?.traceContext ?? false,
    "aria-describedby": `${prefix}-trace-context-hint`,
  });
  const rooms = roomPicker(prefix, loadRooms(context.api), existing?.roomIds ?? null);
  const rateCap = h("input", {
    id: `${prefix}-rate-cap`,
    name: "maxDeliveriesPerSecond",
    type: "number",
    min: 1,
    max: 10000,
    step: 1,
    placeholder: "no cap",
    value: existing?.maxDeliveriesPerSecond ?? undefined,
    "aria-describedby": `${prefix}-rate-cap-hint`,
  });
  const headers = headerRows(prefix, existing?.headers ?? {});
  const credentials = credentialFields(prefix, existing);

  const everything = h("input", {
    type: "checkbox",
    name: "events",
    value: "*",
    id: `${prefix}-event-all`,
    checked: existing?.events.includes("*") ?? false,
  });
  // Groups of events by prefix ("MESSAGE_*": every message event, later ones included), then the
  // catalogue's names, then any other wildcard the endpoint has.
  const groups = eventGroups();
  const current = existing?.events ?? [];
  const groupChoices = groups.map((group) => eventChoice(prefix, group, current));
  for (const choice of groupChoices) choice.describeGroup();
  const names: string[] = [
    ...EVENT_NAMES,
    ...current.filter(
      (event) =>
        event !== "*" &&
        !groups.includes(event) &&
        !(EVENT_NAMES as readonly string[]).includes(event),
    ),
  ];
  const choices = names.map((event) => eventChoice(prefix, event, current));
  const eventBoxes = choices.map((choice) => choice.box);
  const groupBoxes = groupChoices.map((choice) => choice.box);
  /** `*` covers every box; a checked group covers its events (they are sent anyway). */
  const syncEverything = (): void => {
    for (const box of groupBoxes) box.disabled = everything.checked;
    const covering = groupBoxes.filter((box) => box.checked).map((box) => box.value.slice(0, -1));
    for (const box of eventBoxes)
      box.disabled = everything.checked || covering.some((start) => box.value.startsWith(start));
  };
  everything.addEventListener("change", syncEverything);
  for (const box of groupBoxes) box.addEventListener("change", syncEverything);
  syncEverything();
  const all = h("button", { type: "button", class: "link" }, "Select all");
  all.addEventListener("click", () => {
    const every = eventBoxes.every((box) => box.checked);
    for (const box of eventBoxes) box.checked = !every;
  });
  void loadCatalogue(context).then((catalogue) => {
    for (const choice of choices) choice.describe(catalogue.get(choice.box.value));
  });
  const submit = h("button", { type: "submit" }, editing ? "Save changes" : "Create webhook");
  const title = `${prefix}-form-title`;

  const form = h(
    "form",
    {
      id: `${prefix}-form`,
      class: "card",
      novalidate: true,
      "aria-labelledby": title,
    },
    h("h2", { id: title }, editing ? "Edit endpoint" : "New webhook"),
    error,
    h("label", { for: name.id }, "Name"),
    name,
    h("label", { for: url.id }, "URL"),
    url,
    h("label", { for: secret.id }, editing ? "New secret" : "Secret"),
    h("span", { class: "inline" }, secret, generate),
    h(
      "small",
      { id: `${prefix}-secret-hint`, class: "hint" },
      editing
        ? "Leave empty to keep the current secret. A new one (16 to 1024 characters) signs every delivery from now on and is shown once after saving."
        : "16 to 1024 characters. Every delivery is signed with it (X-Webhook-Signature-256); it is shown once after creating, then never again.",
    ),
    h(
      "fieldset",
      { class: "events" },
      h("legend", null, "Events ", all),
      h(
        "div",
        { class: "event-choice every" },
        h("label", { class: "check", for: everything.id }, everything, h("code", null, "*")),
        h(
          "small",
          { class: "hint" },
          "Every event, including ones Parley adds later. The boxes below then do not apply.",
        ),
      ),
      h(
        "div",
        { class: "event-groups", role: "group", "aria-label": "Groups of events" },
        groupChoices.map((choice) => choice.element),
      ),
      choices.map((choice) => choice.element),
    ),
    h("label", { for: scheme.id }, "Signature scheme"),
    scheme,
    h("label", { for: format.id }, "Payload format"),
    format,
    h(
      "small",
      { id: `${prefix}-payload-format-hint`, class: "hint" },
      "CloudEvents 1.0 for Knative, Dapr, Event Grid or Argo Events consumers; the signature covers the body as sent.",
    ),
    h("label", { class: "check", for: traceContext.id }, traceContext, "Send trace context"),
    h(
      "small",
      { id: `${prefix}-trace-context-hint`, class: "hint" },
      "Each attempt carries a W3C traceparent continuing the trace of the request that caused the event.",
    ),
    rooms.element,
    h("label", { for: ordering.id }, "Ordering"),
    ordering,
    h(
      "small",
      { id: `${prefix}-ordering-hint`, class: "hint" },
      "With an ordering, a delivery that fails holds its lane (its room, or the whole endpoint) until it succeeds or is exhausted; other lanes keep going.",
    ),
    h("label", { for: rateCap.id }, "Rate cap (deliveries per second)"),
    rateCap,
    h(
      "small",
      { id: `${prefix}-rate-cap-hint`, class: "hint" },
      "1 to 10000 attempts per second to this endpoint, every Parley process together. Empty: no cap.",
    ),
    headers.element,
    credentials.element,
    h("label", { class: "check", for: enabled.id }, enabled, "Enabled"),
    h("div", { class: "buttons" }, submit),
  );

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    const events = everything.checked
      ? (["*"] as EventSubscription[])
      : [
          ...groupBoxes.filter((box) => box.checked),
          ...eventBoxes.filter((box) => box.checked && !box.disabled),
        ].map((box) => box.value as EventSubscription);
    const roomIds = rooms.read();
    const capText = rateCap.value.trim();
    const cap = capText === "" ? null : Number(capText);
    if (cap !== null && !(Number.isInteger(cap) && cap >= 1 && cap <= 10000))
      return showError(error, "Rate cap: a whole number from 1 to 10000, or empty for no cap.");
    const headerSet = headers.read();
    if (typeof headerSet === "string") return showError(error, headerSet);
    const credentialChanges = credentials.read();
    if (typeof credentialChanges === "string") return showError(error, credentialChanges);
    const signatureScheme = scheme.value as SignatureScheme;
    const order = ordering.value as Ordering;
    const payloadFormat = format.value as PayloadFormat;
    void busy(submit, async () => {
      try {
        // `url` is also the name of a request option: the body goes in `data`.
        if (!existing) {
          const { data } = await context.api("POST /api/admin/webhooks", {
            data: {
              name: name.value,
              url: url.value.trim(),
              // An ed25519 endpoint signs with its key pair: a secret is optional for it.
              ...(secret.value === "" && signatureScheme === "standard-webhooks-ed25519"
                ? {}
                : { secret: secret.value }),
              events,
              enabled: enabled.checked,
              signatureScheme,
              ...(order === "none" ? {} : { ordering: order }),
              payloadFormat,
              traceContext: traceContext.checked,
              ...(roomIds === null ? {} : { roomIds }),
              ...(cap === null ? {} : { maxDeliveriesPerSecond: cap }),
              ...(headerSet === undefined || headerSet === null ? {} : { headers: headerSet }),
              ...credentialChanges,
            },
          });
          if (secret.value !== "") revealSecret(data.id, data.name, secret.value);
          context.flash(`Webhook “${data.name}” created.`);
          context.navigate("/admin/webhooks");
          return;
        }
        const changes: UpdateWebhookParams = {};
        if (name.value !== existing.name) changes.name = name.value;
        if (url.value.trim() !== existing.url) changes.url = url.value.trim();
        if ([...events].sort().join() !== [...existing.events].sort().join())
          changes.events = events;
        if (enabled.checked !== existing.enabled) changes.enabled = enabled.checked;
        if (secret.value !== "") changes.secret = secret.value;
        if (signatureScheme !== existing.signatureScheme) changes.signatureScheme = signatureScheme;
        if (order !== existing.ordering) changes.ordering = order;
        if (payloadFormat !== existing.payloadFormat) changes.payloadFormat = payloadFormat;
        if (traceContext.checked !== existing.traceContext)
          changes.traceContext = traceContext.checked;
        if (JSON.stringify(roomIds) !== JSON.stringify(existing.roomIds)) changes.roomIds = roomIds;
        if (cap !== existing.maxDeliveriesPerSecond) changes.maxDeliveriesPerSecond = cap;
        if (headerSet !== undefined) changes.headers = headerSet;
        Object.assign(changes, credentialChanges);
        if (Object.keys(changes).length === 0) {
          showError(error, "Nothing to save: no field was changed.");
          return;
        }
        const { data } = await context.api("PATCH /api/admin/webhooks/{id}", {
          id: existing.id,
          data: changes,
        });
        if (changes.secret !== undefined) revealSecret(data.id, data.name, changes.secret);
        context.flash(`Webhook “${data.name}” saved.`);
        context.navigate(`/admin/webhooks/${data.id}`);
      } catch (failure) {
        showError(error, context.fail(failure));
      }
    });
  });
  return form;
}

/**
 * Custom request headers as name/value rows. Values are never shown back (the API masks them),
 * and the set is replaced as a whole, so a changed set needs every value typed again.
 */
function headerRows(
  prefix: string,
  current: Record<string, string>,
): { element: HTMLElement; read(): Record<string, string> | null | undefined | string } {
  const list = h("div", { class: "header-rows" });
  let touched = false;
  let count = 0;
  const addRow = (name = "", masked?: string): void => {
    const n = ++count;
    const nameInput = h("input", {
      id: `${prefix}-header-name-${n}`,
      class: "header-name",
      autocomplete: "off",
      spellcheck: "false",
      value: name,
      placeholder: "X-Api-Key",
    });
    const valueInput = h("input", {
      id: `${prefix}-header-value-${n}`,
      class: "header-value",
      autocomplete: "off",
      spellcheck: "false",
      placeholder: masked === undefined ? "value" : `unchanged (${masked})`,
    });
    const remove = h("button", { type: "button", class: "secondary" }, "Remove");
    remove.setAttribute("aria-label", `Remove header ${n}`);
    const line = h(
      "div",
      { class: "header-row", role: "group", "aria-label": `Header ${n}` },
      h(
        "span",
        { class: "field" },
        h("label", { for: nameInput.id }, `Header ${n} name`),
        nameInput,
      ),
      h(
        "span",
        { class: "field" },
        h("label", { for: valueInput.id }, `Header ${n} value`),
        valueInput,
      ),
      remove,
    );
    remove.addEventListener("click", () => {
      touched = true;
      line.remove();
      add.focus();
    });
    list.append(line);
  };
  const add = h("button", { type: "button", class: "secondary" }, "Add header");
  add.addEventListener("click", () => {
    touched = true;
    addRow();
    list.querySelector<HTMLInputElement>(".header-row:last-child .header-name")?.focus();
  });
  for (const [name, masked] of Object.entries(current)) addRow(name, masked);
  list.addEventListener("input", () => (touched = true));
  const hint = `${prefix}-headers-hint`;
  const element = h(
    "fieldset",
    { class: "headers", "aria-describedby": hint },
    h("legend", null, "Custom headers"),
    h(
      "small",
      { id: hint, class: "hint" },
      "Sent with every delivery, up to 10. Values are never shown again; changing the set replaces it whole, so type every value again.",
    ),
    list,
    add,
  );
  return {
    element,
    read() {
      if (!touched) return undefined;
      const headers: Record<string, string> = {};
      for (const line of list.querySelectorAll(".header-row")) {
        const name = line.querySelector<HTMLInputElement>(".header-name")!.value.trim();
        const value = line.querySelector<HTMLInputElement>(".header-value")!.value;
        if (name === "" && value === "") continue;
        if (name === "") return "Custom headers: a header has a value but no name.";
        if (value === "")
          return `Custom headers: type the value of ${name} (the set is replaced as a whole).`;
        headers[name] = value;
      }
      return Object.keys(headers).length === 0 ? null : headers;
    },
  };
}

/** `MESSAGE_*` and the like: each prefix two or more catalogue events share. */
function eventGroups(): string[] {
  const counts = new Map<string, number>();
  for (const name of EVENT_NAMES) {
    const start = name.slice(0, name.indexOf("_") + 1);
    if (start !== "") counts.set(start, (counts.get(start) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n > 1).map(([start]) => `${start}*`);
}

let catalogue: Promise<Map<string, EventType>> | undefined;

/** The event-type catalogue (descriptions and samples), asked for once per page load. */
function loadCatalogue(context: ViewContext): Promise<Map<string, EventType>> {
  catalogue ??= context
    .api("GET /api/admin/webhooks/event-types")
    .then(({ data }) => new Map(data.items.map((item) => [item.name as string, item])))
    .catch(() => {
      catalogue = undefined;
      return new Map<string, EventType>();
    });
  return catalogue;
}

/** One event's checkbox, with its description and sample payload once the catalogue is in. */
function eventChoice(
  prefix: string,
  event: string,
  current: readonly string[],
): {
  box: HTMLInputElement;
  element: HTMLElement;
  describe(type: EventType | undefined): void;
  describeGroup(): void;
} {
  const box = h("input", {
    type: "checkbox",
    name: "events",
    value: event,
    id: `${prefix}-event-${event.replace(/\*/g, "all")}`,
    checked: current.includes(event),
  });
  const element = h(
    "div",
    { class: "event-choice" },
    h("label", { class: "check", for: box.id }, box, h("code", null, event)),
  );
  return {
    box,
    element,
    describeGroup() {
      const start = event.slice(0, -1);
      const covered = EVENT_NAMES.filter((name) => name.startsWith(start));
      const descriptionId = `${box.id}-description`;
      box.setAttribute("aria-describedby", descriptionId);
      element.append(
        h(
          "small",
          { class: "hint", id: descriptionId },
          `Every ${start.toLowerCase().replace(/_$/, "")} event (${covered.length} now), including ones Parley adds later.`,
        ),
      );
    },
    describe(type) {
      if (!type) return;
      const descriptionId = `${box.id}-description`;
      box.setAttribute("aria-describedby", descriptionId);
      element.append(
        h("small", { class: "hint", id: descriptionId }, type.description),
        h(
          "details",
          { class: "sample" },
          h(
            "summary",
            null,
            "Sample payload",
            h("span", { class: "visually-hidden" }, ` of ${event}`),
          ),
          h("pre", { class: "json", tabindex: 0 }, JSON.stringify(type.sample, null, 2)),
        ),
      );
    },
  };
}
