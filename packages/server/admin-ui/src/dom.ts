/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The only way the admin UI builds markup. Text always becomes a text node and attribute values
 * go through setAttribute, so names, URLs and response bodies (all attacker-influenced) are shown,
 * never parsed. There is no innerHTML anywhere in the UI.
 */

export type Child = Node | string | number | null | undefined | false;
type Handler = (event: Event) => void;
export type Attributes = Record<string, string | number | boolean | null | undefined | Handler>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes?: Attributes | null,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) {
      if (typeof value !== "function") throw new TypeError(`${name} must be a function`);
      element.addEventListener(name.slice(2), value);
    } else if (typeof value === "function") {
      throw new TypeError(`${name} cannot be a function`);
    } else if (name === "style") {
      throw new TypeError("inline styles are refused by the content security policy");
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces every child of `parent`. */
export function replaceChildren(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A `<dl>` of label/value pairs. */
export function details(pairs: [string, Child | Child[]][]): HTMLDListElement {
  return h(
    "dl",
    { class: "details" },
    pairs.map(([label, value]) => [h("dt", null, label), h("dd", null, value ?? "—")]).flat(),
  );
}

/** A table with a header row; `rows` are arrays of cells. */
export function table(
  headings: string[],
  rows: HTMLTableRowElement[],
  attributes: Attributes = {},
): HTMLTableElement {
  return h(
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
    h("tbody", null, rows),
  );
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
 * A button that asks again before it acts: the first click turns it into "Confirm" and "Cancel".
 * No `window.confirm`, so nothing blocks the page.
 */
export function confirmButton(
  label: string,
  question: string,
  action: () => void | Promise<void>,
  attributes: Attributes = {},
): HTMLSpanElement {
  const holder = h("span", { class: "confirm" });
  const initial = h("button", { type: "button", class: "danger", ...attributes }, label);
  const ask = (): void => {
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
    cancel.addEventListener("click", () => replaceChildren(holder, initial));
    replaceChildren(holder, h("span", { class: "question" }, question), " ", confirm, " ", cancel);
    confirm.focus();
  };
  initial.addEventListener("click", ask);
  holder.append(initial);
  return holder;
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
