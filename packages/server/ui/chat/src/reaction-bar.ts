/**
 * A message's reactions: one toggle button per emoji with its count (pressed when you reacted);
 * and "Add reaction", which opens the emoji picker.
 */
import type { Message } from "./api.js";
import { h } from "./dom.js";

export interface ReactionActions {
  me: string;
  /** Adds (`on`) or takes back your reaction. */
  react(message: Message, emoji: string, on: boolean): void;
  /** Opens the picker next to `anchor`; absent while the page offers no picker. */
  pickEmoji?: (anchor: HTMLElement, chosen: (emoji: string) => void) => void;
}

/** The message's reactions, or null while it has none. */
export function reactionBar(message: Message, actions: ReactionActions): HTMLElement | null {
  if (message.reactions.length === 0) return null;
  const bar = h("div", { class: "reactions" });
  for (const reaction of message.reactions) {
    const mine = reaction.usernames.includes(actions.me);
    const who = reaction.usernames.join(", ");
    bar.append(
      h(
        "button",
        {
          type: "button",
          class: "reaction",
          "aria-pressed": String(mine),
          "data-emoji": reaction.emoji,
          "data-action": `reaction:${reaction.emoji}`,
          "aria-label": `${reaction.emoji} ${reaction.count}${mine ? ", yours" : ""}`,
          title: who,
          onclick: () => actions.react(message, reaction.emoji, !mine),
        },
        h("span", { "aria-hidden": "true" }, reaction.emoji),
        h("span", { class: "count", "aria-hidden": "true" }, reaction.count),
      ),
    );
  }
  return bar;
}

/** "Add reaction": opens the picker; the emoji chosen is added unless it is already yours. */
export function addReactionButton(message: Message, actions: ReactionActions): HTMLElement | null {
  const pick = actions.pickEmoji;
  if (!pick) return null;
  const add = h(
    "button",
    {
      type: "button",
      class: "link-button",
      "data-action": "react",
      "aria-haspopup": "dialog",
    },
    "Add reaction",
  );
  add.addEventListener("click", () =>
    pick(add, (emoji) => {
      const existing = message.reactions.find((reaction) => reaction.emoji === emoji);
      if (!existing?.usernames.includes(actions.me)) actions.react(message, emoji, true);
    }),
  );
  return add;
}
