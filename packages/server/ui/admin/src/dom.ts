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

/** An ISO-8601 time as `2026-11-22 10:00:00Z`, the full value in the title. */
export function time(iso: string | null | undefined): Child {
  if (iso === null || iso === undefined) return "—";
  const shown = iso.replace("T", " ").replace(/\.\d+Z$/, "Z");
  return h("time", { datetime: iso, title: iso }, shown);
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
