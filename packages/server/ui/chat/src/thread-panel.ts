/**
 * The thread view: a panel beside the room with the thread's first message, its replies oldest
 * first (a deleted reply as a tombstone), and a box to reply. Escape or "Close thread" closes it.
 */
import type { ListItem } from "./api.js";
import { composer } from "./composer.js";
import { h } from "./dom.js";

export interface ThreadPanelOptions {
  parent: ListItem;
  me: string;
  /** A message of the thread as the page shows it (without the thread action). */
  render(item: ListItem): HTMLElement;
  reply(content: string): Promise<void>;
  candidates(): Iterable<string>;
  close(): void;
}

export interface ThreadPanel {
  element: HTMLElement;
  parentId: number;
  /** The replies' list (append to it, oldest first). */
  replies: HTMLElement;
  focus(): void;
}

export function threadPanel(options: ThreadPanelOptions): ThreadPanel {
  const replies = h("div", {
    id: "thread-replies",
    class: "thread-replies",
    role: "log",
    "aria-label": "Replies",
    "aria-live": "polite",
  });
  const box = composer({
    id: "thread-composer",
    previewId: "thread-preview",
    label: "Reply",
    placeholder: "Reply in thread",
    submitLabel: "Send reply",
    me: options.me,
    candidates: options.candidates,
    send: options.reply,
  });
  const element = h(
    "aside",
    {
      id: "thread",
      class: "thread",
      "aria-labelledby": "thread-title",
      onkeydown: (event) => {
        if ((event as KeyboardEvent).key === "Escape" && !event.defaultPrevented) options.close();
      },
    },
    h(
      "div",
      { class: "thread-head" },
      h("h2", { id: "thread-title" }, "Thread"),
      h("button", { type: "button", class: "secondary", onclick: options.close }, "Close thread"),
    ),
    h("div", { class: "thread-parent" }, options.render(options.parent)),
    replies,
    box,
  );
  return {
    element,
    parentId: options.parent.id,
    replies,
    focus: () => element.querySelector<HTMLElement>("#thread-composer")?.focus(),
  };
}
