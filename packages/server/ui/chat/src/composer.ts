/**
 * A message box: markdown with a live preview, Enter sends (Shift+Enter for a new line), and
 * `@` completes the names of the room's people. The room's main box and a thread's reply box.
 */
import { h, replaceChildren } from "./dom.js";
import type { Attachments } from "./files.js";
import { renderContent } from "./markdown.js";
import { mentionCompletion } from "./mention-completion.js";

export interface ComposerOptions {
  /** The text box's id; the mention list's derives from it. */
  id: string;
  previewId: string;
  label: string;
  placeholder: string;
  submitLabel: string;
  me: string;
  /** Names `@` offers. */
  candidates(): Iterable<string>;
  /** Sends; a failure puts the text back. */
  send(content: string, fileIds: number[]): Promise<void>;
  /** Files to send with the message (the room's box has them; a thread's does not). */
  attachments?: Attachments;
  /** Called as the user types (the typing indicator). */
  typing?: () => void;
}

export function composer(options: ComposerOptions): HTMLFormElement {
  const text = h("textarea", {
    id: options.id,
    rows: 3,
    placeholder: options.placeholder,
    "aria-label": options.label,
  });
  // First, so that its Enter (take the name) comes before Enter (send).
  const completion = mentionCompletion(text, options.id, options.candidates);
  const preview = h("div", { id: options.previewId, class: "preview", hidden: true });
  const files = options.attachments;
  const send = async () => {
    const content = text.value;
    const fileIds = files?.ids() ?? [];
    if (files?.busy() || (!content.trim() && fileIds.length === 0)) return;
    text.value = "";
    preview.hidden = true;
    try {
      // A message needs some text: files alone go with their names.
      await options.send(content.trim() ? content : files!.names().join(", "), fileIds);
      files?.clear();
    } catch {
      text.value = content;
    }
  };
  text.addEventListener("input", () => {
    if (text.value.trim()) options.typing?.();
    preview.hidden = text.value.trim() === "";
    replaceChildren(
      preview,
      h("span", { class: "label" }, "Preview"),
      renderContent(text.value, "markdown", options.me),
    );
  });
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !completion.isOpen()) {
      event.preventDefault();
      void send();
    }
  });
  return h(
    "form",
    {
      class: "composer",
      onsubmit: (event) => {
        event.preventDefault();
        void send();
      },
    },
    preview,
    files?.element ?? null,
    h(
      "div",
      { class: "row" },
      h("div", { class: "field" }, text, completion.list),
      h("button", { type: "submit" }, options.submitLabel),
    ),
  );
}
