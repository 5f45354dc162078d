/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The admin UI's markup helpers: the shared ones (../../shared/dom.ts; there is no innerHTML
 * anywhere in the UI) and the admin pages' own.
 */
import { h, type Attributes, type Child } from "../../shared/dom.js";

export { append, h, replaceChildren, type Attributes, type Child } from "../../shared/dom.js";

/** A `<dl>` of label/value pairs. */
export function details(pairs: [string, Child | Child[]][]): HTMLDListElement {
  return h(
    "dl",
    { class: "details" },
    pairs.map(([label, value]) => [h("dt", null, label), h("dd", null, value ?? "—")]).flat(),
  );
}

/**
 * A table with a header row; `rows` are arrays of cells. Each cell is labelled with its column's
 * heading (`data-label`), which the narrow layout shows beside the value when rows stack.
 */
export function table(
  headings: string[],
  rows: HTMLTableRowElement[],
  attributes: Attributes = {},
): HTMLTableElement {
  const element = h(
    "table",
    attributes,
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        headings.map((heading) => h("th", { scope: "col" }, heading)),
      ),
    ),
    h("tbody", null),
  );
  element.dataset.headings = JSON.stringify(headings);
  appendRows(element, rows);
  return element;
}

/** Appends rows to a table made by `table()`, labelling their cells. */
export function appendRows(element: HTMLTableElement, rows: HTMLTableRowElement[]): void {
  for (const tr of rows) labelCells(element, tr);
  element.tBodies[0]!.append(...rows);
}

/** Gives each cell of `tr` its column heading as `data-label`. */
export function labelCells(element: HTMLTableElement, tr: HTMLTableRowElement): void {
  const headings = JSON.parse(element.dataset.headings ?? "[]") as string[];
  Array.from(tr.cells).forEach((cell, i) => {
    const heading = headings[i];
    if (heading) cell.dataset.label = heading;
  });
}

export function row(cells: (Child | Child[])[], attributes: Attributes = {}): HTMLTableRowElement {
  return h(
    "tr",
    attributes,
    cells.map((cell) => h("td", null, cell)),
  );
}

const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 86_400_000],
  ["month", 30 * 86_400_000],
  ["week", 7 * 86_400_000],
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
  ["second", 1000],
];

/** "3 minutes ago", "in 2 hours", "yesterday": how far `at` is from `now`. */
export function relativeTime(at: number, now = Date.now()): string {
  const delta = at - now;
  const size = Math.abs(delta);
  if (size < 10_000) return delta <= 0 ? "just now" : "in a few seconds";
  for (const [unit, ms] of UNITS) {
    if (size >= ms || unit === "second") return relative.format(Math.round(delta / ms), unit);
  }
  return relative.format(Math.round(delta / 1000), "second");
}

const localFormat = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZoneName: "short",
});

/** The exact time, in the browser's time zone and in UTC: what a relative time stands for. */
export function exactTime(iso: string): string {
  const utc = iso.replace("T", " ").replace(/(\.\d+)?Z$/, " UTC");
  return `${localFormat.format(new Date(iso))} · ${utc}`;
}

/**
 * A time as people say it ("3 minutes ago"), with the exact local and UTC time in a tooltip shown
 * on hover and on keyboard focus (the element is focusable) and, for screen readers, in text that
 * is read with it. Kept current while the page is open (refreshRelativeTimes).
 */
export function time(iso: string | null | undefined): Child {
  if (iso === null || iso === undefined) return "—";
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const exact = exactTime(iso);
  return h(
    "time",
    { datetime: iso, class: "when", tabindex: 0, "data-exact": exact },
    h("span", { class: "relative" }, relativeTime(at)),
    h("span", { class: "visually-hidden" }, ` (${exact})`),
  );
}

/** Rewrites every relative time on the page for the current moment. */
export function refreshRelativeTimes(root: ParentNode = document): void {
  for (const element of root.querySelectorAll<HTMLTimeElement>("time.when")) {
    const text = element.querySelector(".relative");
    const at = Date.parse(element.dateTime);
    if (text && !Number.isNaN(at)) {
      const now = relativeTime(at);
      if (text.textContent !== now) text.textContent = now;
    }
  }
}

/** `2026-11-22 11:00` in the browser's time zone, as a date picker shows it. */
export function localDateTime(iso: string): string {
  const at = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/** A coloured status label: SUCCESS, FAILED, pending, enabled... */
export function badge(text: string, kind = text.toLowerCase()): HTMLSpanElement {
  return h("span", { class: `badge badge-${kind.replace(/[^a-z0-9-]/g, "")}` }, text);
}

/**
 * A button that asks again before it acts: the first click shows the question with "Confirm" and
 * "Cancel". No `window.confirm`, so nothing blocks the page. Inside a table row the question goes
 * in a full-width row of its own below it, so the row's cells keep their widths.
 */
export function confirmButton(
  label: string,
  question: string,
  action: () => void | Promise<void>,
  attributes: Attributes = {},
): HTMLSpanElement {
  const holder = h("span", { class: "confirm" });
  const initial = h(
    "button",
    { type: "button", class: "danger", "aria-expanded": "false", ...attributes },
    label,
  );
  let asking: HTMLElement | undefined;
  const close = (): void => {
    asking?.remove();
    asking = undefined;
    initial.hidden = false;
    initial.setAttribute("aria-expanded", "false");
    initial.focus();
  };
  const ask = (): void => {
    if (asking) return;
    const confirm = h(
      "button",
      { type: "button", class: "danger" },
      `Confirm: ${label.toLowerCase()}`,
    );
    const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
    confirm.addEventListener("click", () => {
      confirm.disabled = true;
      cancel.disabled = true;
      void action();
    });
    cancel.addEventListener("click", close);
    const prompt = h(
      "span",
      { class: "confirm-prompt", role: "group", "aria-label": question },
      h("span", { class: "question" }, question),
      " ",
      confirm,
      " ",
      cancel,
    );
    prompt.addEventListener("keydown", (event) => {
      if ((event as KeyboardEvent).key === "Escape") close();
    });
    const tr = holder.closest("tr");
    if (tr) {
      const columns = tr.cells.length;
      asking = h("tr", { class: "confirm-row" }, h("td", { colspan: columns }, prompt));
      tr.after(asking);
      initial.setAttribute("aria-expanded", "true");
    } else {
      asking = prompt;
      initial.hidden = true;
      holder.append(prompt);
    }
    confirm.focus();
  };
  initial.addEventListener("click", ask);
  holder.append(initial);
  return holder;
}

/**
 * A read-only field with a Copy button, for a value shown once (a secret, an ingest URL). The
 * status line says whether the browser let the copy happen.
 */
export function copyField(id: string, label: string, value: string): HTMLElement {
  const input = h("input", {
    id,
    class: "secret",
    readonly: true,
    value,
    spellcheck: "false",
    autocomplete: "off",
  });
  const copy = h("button", { type: "button", "aria-describedby": `${id}-copied` }, "Copy");
  copy.setAttribute("aria-label", `Copy ${label}`);
  const copied = h("span", { class: "copied", id: `${id}-copied`, role: "status" });
  copy.addEventListener("click", async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(value);
      copied.textContent = "Copied.";
    } catch {
      copied.textContent = "Copying was refused by the browser: select the text and copy it.";
    }
  });
  return h(
    "div",
    { class: "copy-field" },
    h("label", { for: id }, label),
    h("div", { class: "inline" }, input, copy),
    copied,
  );
}

/** Runs `action` with `button` disabled, so a double click sends one request. */
export async function busy<T>(button: HTMLButtonElement, action: () => Promise<T>): Promise<T> {
  button.disabled = true;
  try {
    return await action();
  } finally {
    button.disabled = false;
  }
}
