/**
 * Completes `@username` while typing: after an `@` the list below the text box offers the names
 * that start with what follows it. Arrow keys move, Enter or Tab takes the highlighted name,
 * Escape closes; a click takes one too. The text box keeps focus throughout (the list is its
 * `aria-activedescendant`).
 */
import { h, replaceChildren } from "./dom.js";

/** The `@name` being typed just before the caret, if any. */
const TYPING = /(^|[^A-Za-z0-9._@-])@([a-z0-9._-]{0,64})$/i;
const SHOWN = 8;

export interface MentionCompletion {
  /** The list, to place next to the text box. */
  list: HTMLUListElement;
  /** True while the list is open (the text box's own Enter handling should wait). */
  isOpen(): boolean;
}

export function mentionCompletion(
  text: HTMLTextAreaElement,
  idPrefix: string,
  candidates: () => Iterable<string>,
): MentionCompletion {
  const list = h("ul", {
    id: `${idPrefix}-mentions`,
    class: "mention-list",
    role: "listbox",
    "aria-label": "People to mention",
    hidden: true,
  });
  text.setAttribute("aria-autocomplete", "list");
  text.setAttribute("aria-controls", list.id);
  let names: string[] = [];
  let active = 0;
  let start = -1;

  const close = () => {
    list.hidden = true;
    names = [];
    text.removeAttribute("aria-activedescendant");
  };
  const highlight = (index: number) => {
    active = (index + names.length) % names.length;
    for (const [i, option] of [...list.children].entries())
      option.setAttribute("aria-selected", String(i === active));
    text.setAttribute("aria-activedescendant", `${idPrefix}-mention-${active}`);
  };
  const choose = (index: number) => {
    const name = names[index];
    if (name === undefined) return;
    const caret = text.selectionStart;
    const before = `${text.value.slice(0, start)}@${name} `;
    text.value = before + text.value.slice(caret);
    text.setSelectionRange(before.length, before.length);
    close();
    text.dispatchEvent(new Event("input"));
    text.focus();
  };
  const update = () => {
    const caret = text.selectionStart;
    const match = text.selectionEnd === caret ? TYPING.exec(text.value.slice(0, caret)) : null;
    if (!match) return close();
    const prefix = match[2]!.toLowerCase();
    start = caret - prefix.length - 1;
    names = [...new Set(candidates())]
      .filter((name) => name.startsWith(prefix))
      .sort()
      .slice(0, SHOWN);
    if (names.length === 0) return close();
    replaceChildren(
      list,
      names.map((name, i) =>
        h(
          "li",
          {
            id: `${idPrefix}-mention-${i}`,
            role: "option",
            "aria-selected": "false",
            // mousedown, not click: the text box must not lose focus (and close the list) first.
            onmousedown: (event) => {
              event.preventDefault();
              choose(i);
            },
          },
          `@${name}`,
        ),
      ),
    );
    list.hidden = false;
    highlight(0);
  };

  text.addEventListener("input", update);
  text.addEventListener("click", update);
  text.addEventListener("blur", close);
  text.addEventListener("keydown", (event) => {
    if (list.hidden) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      highlight(active + (event.key === "ArrowDown" ? 1 : -1));
    } else if (event.key === "Enter" || event.key === "Tab") {
      event.preventDefault();
      event.stopImmediatePropagation();
      choose(active);
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopImmediatePropagation();
      close();
    }
  });
  return { list, isOpen: () => !list.hidden };
}
