/**
 * One message of the chat page as an `<article>`: who and when, the content (mentions marked),
 * "edited" once changed, its reactions, and the actions on it: reply in its thread (top-level
 * messages), and for your own messages edit in place and delete after a confirmation in place. A
 * deleted message is a tombstone ("message deleted") so that a thread keeps its shape.
 */
import { isTombstone, type ListItem, type Message, type Tombstone } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { renderContent } from "./markdown.js";
import { addReactionButton, reactionBar, type ReactionActions } from "./reaction-bar.js";

export interface MessageActions extends ReactionActions {
  /** The signed-in user's username. */
  me: string;
  /** Saves an edit; answers the message as it now is. */
  edit(message: Message, content: string): Promise<Message>;
  remove(message: Message): Promise<void>;
  /** Opens the message's thread (absent inside the thread view). */
  openThread?: (message: Message) => void;
  /** Shows a failure (the API's own words). */
  fail(error: unknown): void;
  /** Shows the message as it now is (after an edit); answers its element. */
  replace(message: Message): HTMLElement | undefined;
  /** Redraws a message from what the page knows now (after an edit box or question closes). */
  refresh(messageId: number): void;
  /** The message's files (image previews, download links); null when it has none. */
  files?: (message: Message) => HTMLElement | null;
}

export function messageItem(item: ListItem, actions: MessageActions, replyCount = 0): HTMLElement {
  if (isTombstone(item)) return tombstoneItem(item, actions, replyCount);
  const message = item;
  const own = message.sender.username === actions.me && message.sender.type !== "integration";
  const held = message.moderationStatus === "QUARANTINED";
  const content = renderContent(message.content, message.contentFormat, actions.me);
  const buttons: HTMLElement[] = [];
  const article = h(
    "article",
    {
      class: ["message", own ? "own" : "", held ? "held" : ""].filter(Boolean).join(" "),
      "data-message-id": message.id,
      "aria-label": `${message.sender.displayName}, ${new Date(message.createdAt).toLocaleTimeString()}`,
    },
    h(
      "header",
      null,
      h("strong", null, message.sender.displayName),
      h("time", { datetime: message.createdAt }, new Date(message.createdAt).toLocaleTimeString()),
      message.editedAt === null
        ? null
        : h(
            "span",
            { class: "edited", title: `Edited ${new Date(message.editedAt).toLocaleString()}` },
            "(edited)",
          ),
    ),
    content,
    actions.files?.(message) ?? null,
    held
      ? h(
          "p",
          { class: "held-notice" },
          "Held for review: only you see this message until a moderator approves it.",
        )
      : null,
  );
  const toolbar = h("div", { class: "actions" });
  if (actions.openThread && message.threadId === null && !held) {
    const open = actions.openThread;
    const count = message.replyCount;
    buttons.push(
      h(
        "button",
        {
          type: "button",
          class: count > 0 ? "link-button replies" : "link-button",
          "data-action": "thread",
          onclick: () => open(message),
        },
        count === 0 ? "Reply in thread" : count === 1 ? "1 reply" : `${count} replies`,
      ),
    );
  }
  if (own) {
    const edit = h(
      "button",
      { type: "button", class: "link-button", "data-action": "edit" },
      "Edit",
    );
    edit.addEventListener("click", () => startEditing(article, content, message, actions));
    const remove = h(
      "button",
      { type: "button", class: "link-button", "data-action": "delete" },
      "Delete",
    );
    remove.addEventListener("click", () => confirmDelete(toolbar, message, actions));
    buttons.push(edit, remove);
  }
  const react = held ? null : addReactionButton(message, actions);
  if (react) buttons.push(react);
  toolbar.append(...buttons);
  const reactions = reactionBar(message, actions);
  if (reactions) article.append(reactions);
  article.append(toolbar);
  return article;
}

function tombstoneItem(item: Tombstone, actions: MessageActions, replyCount: number): HTMLElement {
  return h(
    "article",
    { class: "message deleted", "data-message-id": item.id, "data-deleted": "true" },
    h("p", { class: "tombstone" }, "message deleted"),
    replyCount > 0 && actions.openThread && item.threadId === null
      ? h(
          "div",
          { class: "actions" },
          h(
            "button",
            {
              type: "button",
              class: "link-button replies",
              "data-action": "thread",
              onclick: () => actions.openThread!({ ...placeholder(item), replyCount }),
            },
            replyCount === 1 ? "1 reply" : `${replyCount} replies`,
          ),
        )
      : null,
  );
}

/** What the thread view needs of a deleted top-level message. */
function placeholder(item: Tombstone): Message {
  return {
    id: item.id,
    roomId: item.roomId,
    content: "",
    contentFormat: "markdown",
    sender: { username: null, displayName: "" },
    createdAt: item.deletedAt,
    threadId: null,
    replyCount: 0,
    lastReplyAt: null,
    revision: 0,
    editedAt: null,
    updatedAt: item.deletedAt,
    reactions: [],
  };
}

/** Replaces the content with an edit box: Enter or Save saves, Escape or Cancel leaves it. */
function startEditing(
  article: HTMLElement,
  content: HTMLElement,
  message: Message,
  actions: MessageActions,
): void {
  const box = h("textarea", {
    class: "edit-box",
    rows: 2,
    "aria-label": "Edit message",
  });
  box.value = message.content;
  const cancel = () => {
    form.replaceWith(content);
    article.querySelector<HTMLElement>('[data-action="edit"]')?.focus();
    actions.refresh(message.id);
  };
  const save = async () => {
    const next = box.value;
    if (!next.trim()) return;
    if (next === message.content) return cancel();
    box.disabled = true;
    try {
      const updated = await actions.edit(message, next);
      const container = article.parentElement;
      form.replaceWith(content);
      actions.replace(updated);
      container
        ?.querySelector<HTMLElement>(`[data-message-id="${message.id}"] [data-action="edit"]`)
        ?.focus();
    } catch (error) {
      box.disabled = false;
      box.focus();
      actions.fail(error);
    }
  };
  const form = h(
    "form",
    {
      class: "edit",
      onsubmit: (event) => {
        event.preventDefault();
        void save();
      },
    },
    box,
    h(
      "div",
      { class: "row" },
      h("button", { type: "submit" }, "Save"),
      h("button", { type: "button", class: "secondary", onclick: cancel }, "Cancel"),
      h("span", { class: "hint" }, "Enter saves, Escape cancels"),
    ),
  );
  box.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      cancel();
    } else if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      void save();
    }
  });
  content.replaceWith(form);
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
}

/** Asks in place, not with a dialog: "Delete this message?" Delete / Cancel. */
function confirmDelete(toolbar: HTMLElement, message: Message, actions: MessageActions): void {
  const saved = [...toolbar.childNodes];
  const restore = () => {
    replaceChildren(toolbar, saved);
    toolbar.querySelector<HTMLElement>('[data-action="delete"]')?.focus();
    actions.refresh(message.id);
  };
  const yes = h("button", { type: "button", class: "danger" }, "Delete message");
  const no = h("button", { type: "button", class: "secondary" }, "Cancel");
  yes.addEventListener("click", () => {
    // The question goes: the message's redraw (as a tombstone) is no longer held back by it.
    replaceChildren(toolbar, h("span", { class: "hint" }, "Deleting…"));
    actions.remove(message).catch((error: unknown) => {
      restore();
      actions.fail(error);
    });
  });
  no.addEventListener("click", restore);
  const question = h(
    "div",
    {
      class: "confirm",
      role: "group",
      "aria-label": "Confirm delete",
      onkeydown: (event) => {
        if ((event as KeyboardEvent).key !== "Escape") return;
        event.preventDefault();
        restore();
      },
    },
    h("span", null, "Delete this message?"),
    yes,
    no,
  );
  replaceChildren(toolbar, question);
  no.focus();
}
