import type {
  FlagContext,
  FlagReviewStatus,
  MessageListItem,
  Message,
  MessageRevision,
  ModerationFlag as Flag,
} from "@parley/client/browser";
import { isStatus, paginate } from "../api.js";
import { flashFailure, link, type View, type ViewContext } from "../context.js";
import {
  badge,
  busy,
  confirmButton,
  details,
  h,
  labelCells,
  replaceChildren,
  row,
  table,
  time,
} from "../dom.js";
import { pagedTable } from "../paged-table.js";

const PAGE_SIZE = 50;

function score(flag: Flag): string {
  return flag.score.toFixed(2);
}

/** Approve and Reject for a pending flag; `done` gets the reviewed flag. */
function reviewButtons(
  context: ViewContext,
  flag: Flag,
  done: (reviewed: Flag) => void,
): HTMLElement[] {
  if (flag.reviewStatus !== "pending") return [];
  // Of equal weight: neither decision is the default one.
  const approve = h("button", { type: "button", class: "secondary decision" }, "Approve");
  const reject = h("button", { type: "button", class: "secondary decision" }, "Reject");
  const decide = (verb: "approve" | "reject", button: HTMLButtonElement) =>
    busy(button, async () => {
      try {
        const { data } = await context.api(`POST /api/admin/moderation/flags/{id}/${verb}`, {
          id: flag.id,
        });
        context.flash(
          verb === "approve"
            ? `Flag ${flag.id} approved: message ${flag.messageId} is visible.`
            : `Flag ${flag.id} rejected: message ${flag.messageId} is hidden.`,
        );
        done(data);
      } catch (error) {
        const message = isStatus(error, 409)
          ? `Flag ${flag.id} was already reviewed by someone else.`
          : context.fail(error);
        if (message !== undefined) context.flash(message, "error");
        if (isStatus(error, 409)) done(flag);
      }
    });
  approve.addEventListener("click", () => void decide("approve", approve));
  reject.addEventListener("click", () => void decide("reject", reject));
  return [approve, reject];
}

/** Where the flagged message was posted: its room's name. */
function where(flag: Flag): string {
  return flag.roomName === null ? "a direct message or a deleted room" : `#${flag.roomName}`;
}

/** The flagged text (the API's plain-text excerpt), with where it was posted. */
function messageCell(flag: Flag): HTMLElement {
  return h(
    "div",
    { class: "flagged" },
    flag.messageText === null
      ? h("span", { class: "muted" }, "(the message no longer exists)")
      : h("q", { class: "excerpt" }, flag.messageText),
    h(
      "small",
      { class: "muted" },
      `in ${where(flag)}${flag.authorUsername === null ? "" : ` by @${flag.authorUsername}`}`,
    ),
  );
}

export const moderationView: View = async (context) => {
  const { root } = context;
  const filter = h(
    "select",
    { id: "flag-status", name: "status" },
    h("option", { value: "pending" }, "Pending review"),
    h("option", { value: "approved" }, "Approved"),
    h("option", { value: "rejected" }, "Rejected"),
    h("option", { value: "" }, "All"),
  );
  const flags = table(
    [
      "Flag",
      "Category",
      "Score",
      "Band",
      "Action taken",
      "Review",
      "Message",
      "Created",
      "Actions",
    ],
    [],
    { class: "data responsive", id: "flags" },
  );
  const list = pagedTable<Flag>(flags, {
    emptyText: "Nothing to review.",
    rowOf: (flag) => flagRow(flag),
    fail: (error) => context.fail(error),
  });
  root.append(
    h("h1", null, "Moderation queue"),
    h(
      "p",
      { class: "lead" },
      "Messages the AI moderation flagged or quarantined, oldest first. Approving shows the message ",
      "(a quarantined one is announced now); rejecting hides it from everyone but admins.",
    ),
    h("div", { class: "toolbar" }, h("label", { for: "flag-status" }, "Show"), filter),
    ...list.parts,
  );

  function flagRow(flag: Flag): HTMLTableRowElement {
    const tr = row(
      [
        link(`/admin/moderation/${flag.id}`, `#${flag.id}`),
        flag.category,
        score(flag),
        badge(flag.band, `band-${flag.band}`),
        badge(flag.status),
        badge(flag.reviewStatus),
        messageCell(flag),
        time(flag.createdAt),
        h(
          "span",
          { class: "actions" },
          reviewButtons(context, flag, (reviewed) => tr.replaceWith(flagRow(reviewed))),
        ),
      ],
      { "data-flag-id": flag.id },
    );
    labelCells(flags, tr);
    return tr;
  }

  function show(): Promise<void> {
    const status = filter.value as FlagReviewStatus | "";
    return list.show(
      paginate(context.api, "GET /api/admin/moderation/flags", {
        limit: PAGE_SIZE,
        ...(status === "" ? {} : { status }),
      }),
    );
  }

  filter.addEventListener("change", () => void show());
  await show();
};

/** `/admin/moderation/<flagId>`: the link moderation webhook events carry. */
export const flagView: View = async (context, [idText]) => {
  const id = Number(idText);
  const { root } = context;
  root.append(h("p", { class: "crumbs" }, link("/admin/moderation", "← Moderation queue")));

  let flag: Flag;
  try {
    flag = (await context.api("GET /api/admin/moderation/flags/{id}", { id })).data;
  } catch (error) {
    const message = isStatus(error, 404)
      ? `There is no moderation flag ${id}.`
      : context.fail(error);
    if (message !== undefined) root.append(h("p", { class: "error" }, message));
    return;
  }

  const holder = h("div", { id: "flag" });
  const messageHolder = h("div", { class: "message" }, h("p", null, "Loading the message…"));
  const editsHolder = h("div", { id: "message-edits" });
  root.append(holder);

  const render = (current: Flag): void => {
    replaceChildren(
      holder,
      h("h1", null, `Moderation flag ${current.id}`),
      details([
        ["Category", current.category],
        ["Score", score(current)],
        ["Band", badge(current.band, `band-${current.band}`)],
        [
          "Action taken",
          [
            badge(current.status),
            current.status === "QUARANTINED"
              ? " hidden from the room until approved"
              : " visible in the room, queued for review",
          ],
        ],
        ["Review", h("span", { id: "review-status" }, badge(current.reviewStatus))],
        ["Reviewed by", current.reviewedBy ?? "—"],
        ["Reviewed", time(current.reviewedAt)],
        ["Posted in", where(current)],
        [
          "Author",
          current.authorUsername === null ? "an integration" : `@${current.authorUsername}`,
        ],
        ["Flagged", time(current.createdAt)],
      ]),
      h("h2", null, "Message"),
      messageHolder,
      h("div", { class: "actions" }, reviewButtons(context, current, render)),
      editsHolder,
      contextHolder,
      authorHolder,
    );
  };
  const contextHolder = h("section", { id: "message-context", "aria-labelledby": "context-title" });
  const authorHolder = h("section", { id: "author", "aria-labelledby": "author-title" });
  render(flag);
  void showEdits(context, flag, editsHolder);
  void showContext(context, flag, contextHolder, authorHolder);

  try {
    const { data } = await context.api("GET /api/rooms/{roomId}/messages/{messageId}", {
      roomId: flag.roomId,
      messageId: flag.messageId,
      mediaType: { format: "text+json" },
    });
    const message: Message = data;
    replaceChildren(
      messageHolder,
      h(
        "p",
        { class: "meta" },
        `${message.sender.displayName}`,
        message.sender.username === null ? "" : ` (@${message.sender.username})`,
        " · ",
        time(message.createdAt),
      ),
      h(
        "blockquote",
        { class: "content", id: "message-content" },
        message.contentText ?? message.content,
      ),
    );
  } catch (error) {
    const message = isStatus(error, 404)
      ? "The message no longer exists."
      : isStatus(error, 410)
        ? "The message was deleted: its content and its edits are gone."
        : context.fail(error);
    if (message !== undefined) {
      replaceChildren(
        messageHolder,
        h("p", { class: "error" }, `The message could not be loaded: ${message}`),
      );
    }
  }
};

/** One message of the conversation around a flag, as text, with who wrote it and when. */
function contextItem(item: MessageListItem): HTMLLIElement {
  if ("deleted" in item) {
    return h(
      "li",
      { class: "deleted", "data-message-id": item.id },
      h("p", { class: "muted" }, "(deleted) · ", time(item.deletedAt)),
    );
  }
  return h(
    "li",
    { "data-message-id": item.id },
    h(
      "p",
      { class: "meta" },
      h("strong", null, item.sender.displayName),
      item.sender.username === null ? " (integration)" : ` @${item.sender.username}`,
      " · ",
      time(item.createdAt),
      item.moderationStatus === "none" ? null : [" · ", badge(item.moderationStatus)],
    ),
    h("p", { class: "context-text" }, item.content),
  );
}

/**
 * The conversation around the flagged message (what it answered, what came after), the author's
 * other recent flags, and what can be done about the author: disable the account, revoke its
 * tokens.
 */
async function showContext(
  context: ViewContext,
  flag: Flag,
  holder: HTMLElement,
  authorHolder: HTMLElement,
): Promise<void> {
  let found: FlagContext;
  try {
    found = (await context.api("GET /api/admin/moderation/flags/{id}/context", { id: flag.id }))
      .data;
  } catch (error) {
    const message = context.fail(error);
    if (message !== undefined)
      replaceChildren(
        holder,
        h("p", { class: "error" }, `The context could not be loaded: ${message}`),
      );
    return;
  }
  const flaggedItem = h(
    "li",
    { class: "flagged-message", "data-message-id": flag.messageId },
    h(
      "p",
      { class: "meta" },
      h(
        "strong",
        null,
        flag.authorUsername === null ? "an integration" : `@${flag.authorUsername}`,
      ),
      " · ",
      time(flag.createdAt),
      " · ",
      h("strong", null, "the flagged message"),
    ),
    h("p", { class: "context-text" }, flag.messageText ?? "(the message no longer exists)"),
  );
  replaceChildren(
    holder,
    h("h2", { id: "context-title" }, "In its conversation"),
    h(
      "ol",
      { class: "conversation", "aria-labelledby": "context-title" },
      found.before.map((item) => contextItem(item)),
      flaggedItem,
      found.after.map((item) => contextItem(item)),
    ),
  );

  if (flag.authorId === null) {
    replaceChildren(
      authorHolder,
      h("h2", { id: "author-title" }, "Author"),
      h(
        "p",
        { class: "muted" },
        "An integration posted it: manage it on the inbound webhooks page.",
      ),
    );
    return;
  }
  const authorId = flag.authorId;
  const username = flag.authorUsername ?? `user ${authorId}`;
  const disable = confirmButton(
    "Disable user",
    `Disable @${username}? They are signed out everywhere and their tokens stop working, until an admin enables them again.`,
    async () => {
      try {
        await context.api("POST /api/admin/users/{id}/disable", { id: authorId });
        context.flash(`@${username} is disabled.`);
        context.navigate(`/admin/moderation/${flag.id}`);
      } catch (error) {
        flashFailure(context, error);
      }
    },
  );
  const revoke = confirmButton(
    "Revoke their tokens",
    `Revoke every token @${username} holds now? Scripts and bots using them stop working.`,
    async () => {
      try {
        await context.api("POST /api/admin/users/{id}/revoke-tokens", { id: authorId });
        context.flash(`Every token of @${username} is revoked.`);
        context.navigate(`/admin/moderation/${flag.id}`);
      } catch (error) {
        flashFailure(context, error);
      }
    },
  );
  replaceChildren(
    authorHolder,
    h("h2", { id: "author-title" }, `Author: @${username}`),
    h(
      "p",
      null,
      link(`/admin/users?query=${encodeURIComponent(username)}`, `@${username} on the People page`),
    ),
    h("h3", null, "Their other recent flags"),
    found.authorFlags.length === 0
      ? h("p", { class: "muted", id: "author-flags-none" }, "None: this is their first.")
      : table(
          ["Flag", "Category", "Review", "Message", "Flagged"],
          found.authorFlags.map((other) =>
            row([
              link(`/admin/moderation/${other.id}`, `#${other.id}`),
              other.category,
              badge(other.reviewStatus),
              messageCell(other),
              time(other.createdAt),
            ]),
          ),
          { class: "data responsive", id: "author-flags" },
        ),
    h("div", { class: "actions author-actions" }, disable, revoke),
  );
}

/**
 * The message's versions, oldest first (revision 1 is what was posted, the last one what it says
 * now), so a reviewer sees what an edit changed: an edit goes through moderation as a post does.
 */
async function showEdits(context: ViewContext, flag: Flag, holder: HTMLElement): Promise<void> {
  let revisions: MessageRevision[];
  try {
    const { data } = await context.api("GET /api/rooms/{roomId}/messages/{messageId}/revisions", {
      roomId: flag.roomId,
      messageId: flag.messageId,
    });
    revisions = data.items;
  } catch (error) {
    // A message that is gone says so above.
    if (isStatus(error, 404) || isStatus(error, 410)) return;
    const message = context.fail(error);
    if (message !== undefined)
      replaceChildren(
        holder,
        h("p", { class: "error" }, `The edits could not be loaded: ${message}`),
      );
    return;
  }
  if (revisions.length <= 1) {
    replaceChildren(holder, h("p", { class: "muted" }, "Not edited since it was posted."));
    return;
  }
  const last = revisions.length;
  replaceChildren(
    holder,
    h("h2", { id: "edits-title" }, `Edits (${last - 1})`),
    h(
      "ol",
      { class: "revisions", "aria-labelledby": "edits-title" },
      revisions.map((revision) =>
        h(
          "li",
          { "data-revision": revision.revision },
          h(
            "p",
            { class: "meta" },
            revision.revision === 1
              ? "Posted"
              : revision.revision === last
                ? `Edit ${revision.revision - 1} (current)`
                : `Edit ${revision.revision - 1}`,
            " · ",
            time(revision.editedAt),
            revision.contentFormat === "html" ? " · HTML" : "",
          ),
          // As sent, shown as text: a reviewer sees exactly what was written.
          h("pre", { class: "revision-content" }, revision.content),
        ),
      ),
    ),
  );
}
