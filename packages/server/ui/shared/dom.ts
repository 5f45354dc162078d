/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * How the browser pages (the admin UI, the chat page) build markup. Text always becomes a text
 * node and attribute values go through setAttribute, so names, URLs, message text and response
 * bodies (all attacker-influenced) are shown, never parsed.
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
