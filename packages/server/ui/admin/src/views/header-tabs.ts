import type { DeliveryAttempt } from "@parley/client/browser";
import { h } from "../dom.js";

type Side = "request" | "response";
const SIDES: [Side, string][] = [
  ["request", "Request headers"],
  ["response", "Response headers"],
];

/** The tab each attempt shows, kept while a live delivery page redraws. */
const chosen = new Map<number, Side>();

/**
 * One attempt's request and response headers as ARIA tabs: a tablist of two tabs, one panel
 * shown. Arrow keys, Home and End move between the tabs (which also selects), Tab goes into the
 * panel: the WAI-ARIA tabs pattern with automatic activation.
 */
export function headerTabs(attempt: DeliveryAttempt): HTMLElement {
  const base = `attempt-${attempt.attempt}-headers`;
  const current = chosen.get(attempt.attempt) ?? "request";
  const tabs: HTMLButtonElement[] = [];
  const panels: HTMLElement[] = [];
  for (const [side, label] of SIDES) {
    const selected = side === current;
    tabs.push(
      h(
        "button",
        {
          type: "button",
          role: "tab",
          id: `${base}-${side}-tab`,
          "aria-controls": `${base}-${side}`,
          "aria-selected": selected ? "true" : "false",
          tabindex: selected ? 0 : -1,
          "data-side": side,
        },
        label,
      ),
    );
    const values = side === "request" ? attempt.requestHeaders : attempt.responseHeaders;
    panels.push(
      h(
        "div",
        {
          role: "tabpanel",
          id: `${base}-${side}`,
          "aria-labelledby": `${base}-${side}-tab`,
          tabindex: 0,
          class: "tab-panel",
          hidden: !selected,
        },
        values === null
          ? h(
              "p",
              { class: "empty" },
              side === "request"
                ? "Not kept for this attempt (it is older than header logging)."
                : "No answer, so no headers.",
            )
          : Object.keys(values).length === 0
            ? h("p", { class: "empty" }, "None.")
            : h(
                "dl",
                { class: "headers-list" },
                Object.entries(values).flatMap(([name, value]) => [
                  h("dt", null, name),
                  h("dd", null, value),
                ]),
              ),
      ),
    );
  }
  const select = (index: number, focus: boolean): void => {
    tabs.forEach((tab, i) => {
      const on = i === index;
      tab.setAttribute("aria-selected", on ? "true" : "false");
      tab.tabIndex = on ? 0 : -1;
      panels[i]!.hidden = !on;
    });
    chosen.set(attempt.attempt, tabs[index]!.dataset.side as Side);
    if (focus) tabs[index]!.focus();
  };
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => select(i, false));
    tab.addEventListener("keydown", (event) => {
      const key = (event as KeyboardEvent).key;
      const last = tabs.length - 1;
      const to =
        key === "ArrowRight"
          ? (i + 1) % tabs.length
          : key === "ArrowLeft"
            ? (i + last) % tabs.length
            : key === "Home"
              ? 0
              : key === "End"
                ? last
                : undefined;
      if (to === undefined) return;
      event.preventDefault();
      select(to, true);
    });
  });
  const title = `${base}-title`;
  return h(
    "section",
    { class: "header-tabs", "aria-labelledby": title },
    h("h3", { id: title }, `Attempt ${attempt.attempt}`),
    h("div", { role: "tablist", "aria-labelledby": title, class: "tablist" }, tabs),
    panels,
  );
}
