import type { Api } from "./api.js";
import { h, type Child } from "./dom.js";

/** What a page gets from the shell. */
export interface ViewContext {
  api: Api;
  /** The page's own element; a page that finishes loading after the user moved on is not shown. */
  root: HTMLElement;
  navigate(path: string): void;
  /** A note above the page that stays until the next action (`error` for failures). */
  flash(message: string, kind?: "ok" | "error"): void;
  /**
   * The message to show for a failed call. A 401 means the token stopped working: the shell
   * returns to sign-in and `undefined` is answered, so the caller shows nothing.
   */
  fail(error: unknown): string | undefined;
}

export type View = (context: ViewContext, params: string[]) => Promise<void>;

/** Shows a failed call's message in the note above the page (nothing after a 401: see `fail`). */
export function flashFailure(context: ViewContext, error: unknown): void {
  const message = context.fail(error);
  if (message !== undefined) context.flash(message, "error");
}

/** A link inside the UI: followed with the History API, no page load. */
export function link(path: string, ...children: Child[]): HTMLAnchorElement {
  return h("a", { href: path, "data-nav": true }, ...children);
}

/** Where a failure is written next to a form: empty until there is one. */
export function errorBox(id: string): HTMLParagraphElement {
  return h("p", { id, class: "error", role: "alert", hidden: true });
}

export function showError(box: HTMLElement, message: string | undefined): void {
  if (message === undefined) return;
  box.textContent = message;
  box.hidden = false;
}

export function clearError(box: HTMLElement): void {
  box.textContent = "";
  box.hidden = true;
}
