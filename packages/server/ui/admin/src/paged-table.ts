import type { Page } from "@parley/client/browser";
import { appendRows, busy, h, labelCells } from "./dom.js";

export interface PagedTable<T> {
  /** The table, its empty note, its error line and its "Load more" button, to place in a view. */
  readonly parts: [HTMLTableElement, HTMLParagraphElement, HTMLParagraphElement, HTMLButtonElement];
  /**
   * Empties the table and shows the first page of `pages`; "Load more" then reads the next ones.
   * Pages of an earlier listing still arriving (the filter changed meanwhile) are dropped.
   */
  show(pages: AsyncGenerator<Page<T>, void, undefined>): Promise<void>;
  /**
   * Redraws rows from a fresh first page (newest first): rows already shown are replaced in
   * place, new ones are added on top. Rows further down (from "Load more") stay.
   */
  merge(items: readonly T[]): void;
}

/** A table filled page by page from a paginated list (`{items, nextCursor}` answers). */
export function pagedTable<T>(
  table: HTMLTableElement,
  options: {
    /** Shown instead of the table when the listing is empty. */
    emptyText: string;
    rowOf(item: T): HTMLTableRowElement;
    /** A stable key of an item, for merge(). */
    keyOf?(item: T): string;
    /** The message to show for a failed page, or undefined when it was handled (signed out). */
    fail(error: unknown): string | undefined;
  },
): PagedTable<T> {
  const body = table.tBodies[0]!;
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Load more");
  const empty = h("p", { class: "empty", hidden: true }, options.emptyText);
  const failure = h("p", { class: "error", role: "alert", hidden: true });
  let pages: AsyncGenerator<Page<T>, void, undefined> | undefined;
  let generation = 0;

  async function nextPage(current: number): Promise<void> {
    if (!pages) return;
    try {
      const step = await pages.next();
      if (current !== generation) return;
      if (step.done) {
        more.hidden = true;
        return;
      }
      appendRows(
        table,
        step.value.items.map((item) => keyed(item)),
      );
      more.hidden = step.value.nextCursor === null;
      empty.hidden = body.childElementCount > 0;
      table.hidden = body.childElementCount === 0;
    } catch (error) {
      if (current !== generation) return;
      const message = options.fail(error);
      if (message !== undefined) {
        failure.textContent = message;
        failure.hidden = false;
      }
    }
  }

  function keyed(item: T): HTMLTableRowElement {
    const tr = options.rowOf(item);
    if (options.keyOf) tr.dataset.key = options.keyOf(item);
    return tr;
  }

  more.addEventListener("click", () => void busy(more, () => nextPage(generation)));

  return {
    parts: [table, empty, failure, more],
    show(next) {
      const current = ++generation;
      body.replaceChildren();
      failure.hidden = true;
      empty.hidden = true;
      more.hidden = true;
      pages = next;
      return nextPage(current);
    },
    merge(items) {
      let anchor: HTMLTableRowElement | undefined;
      for (const item of items) {
        const fresh = keyed(item);
        labelCells(table, fresh);
        const old = Array.from(body.rows).find((tr) => tr.dataset.key === fresh.dataset.key);
        if (old) {
          if (!old.isEqualNode(fresh)) old.replaceWith(fresh);
          else {
            anchor = old;
            continue;
          }
        } else if (anchor) anchor.after(fresh);
        else body.prepend(fresh);
        anchor = fresh;
      }
      empty.hidden = body.childElementCount > 0;
      table.hidden = body.childElementCount === 0;
    },
  };
}
