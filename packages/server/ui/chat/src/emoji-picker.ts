/**
 * The reaction picker: a small dialog under "Add reaction" with a search box (by name, tag or
 * description, from the gemoji data the server's shortcodes use) and the matching emoji as
 * buttons. Enter in the box takes the first match, Down goes to the emoji and the arrow keys move
 * among them (Up from the first row goes back to the box); Escape, or a click elsewhere, closes it
 * and focus goes back to the button that opened it.
 */
import { gemoji } from "gemoji";
import { h, replaceChildren } from "./dom.js";

/** Shown before anything is typed. */
const COMMON = ["+1", "heart", "tada", "smile", "joy", "eyes", "rocket", "white_check_mark"];
const SHOWN = 48;
/** Emoji per row of the grid (styles.css: .emoji-grid). */
const COLUMNS = 8;

interface Entry {
  emoji: string;
  name: string;
  words: string;
}

const ENTRIES: Entry[] = gemoji.map((entry) => ({
  emoji: entry.emoji,
  name: entry.names[0]!,
  words: [...entry.names, ...entry.tags, entry.description].join(" ").toLowerCase(),
}));
const BY_NAME = new Map(ENTRIES.map((entry) => [entry.name, entry]));

/** The emoji matching a search, names that start with it first. */
export function searchEmoji(query: string): Entry[] {
  const q = query.trim().toLowerCase().replace(/^:|:$/g, "");
  if (q === "") return COMMON.map((name) => BY_NAME.get(name)).filter((e) => e !== undefined);
  const starts = ENTRIES.filter((entry) => entry.name.startsWith(q));
  const contains = ENTRIES.filter((entry) => !entry.name.startsWith(q) && entry.words.includes(q));
  return [...starts, ...contains].slice(0, SHOWN);
}

let open: (() => void) | undefined;

/** Opens the picker after `anchor`; `chosen` gets the emoji picked. */
export function pickEmoji(anchor: HTMLElement, chosen: (emoji: string) => void): void {
  open?.();
  const search = h("input", {
    type: "search",
    class: "emoji-search",
    placeholder: "Search emoji",
    "aria-label": "Search emoji",
    autocomplete: "off",
  });
  const grid = h("div", { class: "emoji-grid", role: "group", "aria-label": "Emoji" });
  const close = (returnFocus: boolean) => {
    open = undefined;
    document.removeEventListener("mousedown", outside, true);
    dialog.remove();
    if (returnFocus) anchor.focus();
  };
  const outside = (event: MouseEvent) => {
    if (!dialog.contains(event.target as Node)) close(false);
  };
  const take = (emoji: string) => {
    close(true);
    chosen(emoji);
  };
  let results: Entry[] = [];
  const list = () => {
    results = searchEmoji(search.value);
    replaceChildren(
      grid,
      results.length === 0
        ? h("p", { class: "empty" }, "No emoji matches.")
        : results.map((entry) =>
            h(
              "button",
              {
                type: "button",
                class: "emoji",
                title: `:${entry.name}:`,
                "aria-label": entry.name.replace(/_/g, " "),
                onclick: () => take(entry.emoji),
              },
              entry.emoji,
            ),
          ),
    );
  };
  search.addEventListener("input", list);
  search.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      if (results[0]) take(results[0].emoji);
    } else if (event.key === "ArrowDown") {
      event.preventDefault();
      grid.querySelector<HTMLElement>("button")?.focus();
    }
  });
  grid.addEventListener("keydown", (event) => {
    const buttons = [...grid.querySelectorAll<HTMLElement>("button")];
    const at = buttons.indexOf(document.activeElement as HTMLElement);
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: COLUMNS, ArrowUp: -COLUMNS }[event.key];
    if (at < 0 || step === undefined) return;
    event.preventDefault();
    const next = at + step;
    if (next < 0) search.focus();
    else buttons[Math.min(next, buttons.length - 1)]?.focus();
  });
  const dialog = h(
    "div",
    {
      class: "emoji-picker",
      role: "dialog",
      "aria-label": "Pick a reaction",
      onkeydown: (event) => {
        if ((event as KeyboardEvent).key !== "Escape") return;
        event.preventDefault();
        event.stopPropagation();
        close(true);
      },
    },
    search,
    grid,
  );
  list();
  anchor.after(dialog);
  document.addEventListener("mousedown", outside, true);
  open = () => close(false);
  search.focus();
}
