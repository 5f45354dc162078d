import type {
  FlagReviewStatus,
  Message,
  MessageRevision,
  ModerationFlag as Flag,
} from "@parley/client/browser";
import { isStatus, paginate } from "../api.js";
import { link, type View, type ViewContext } from "../context.js";
import { badge, busy, details, h, labelCells, replaceChildren, row, table, time } from "../dom.js";
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
  const approve = h("button", { type: "button" }, "Approve");
  const reject = h("button", { type: "button", class: "danger" }, "Reject");
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

/** The flagged text (the API's plain-text excerpt), with where it was posted. */
function messageCell(flag: Flag): HTMLElement {
  return h(
    "div",
    { class: "flagged" },
    flag.messageText === null
      ? h("span", { class: "muted" }, "(the message no longer exists)")
      : h("q", { class: "excerpt" }, flag.messageText),
    h("small", { class: "muted" }, `message ${flag.messageId} in room ${flag.roomId}`),
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

  let flag: Flag | undefined;
  try {
    // There is no single-flag route: walk the list (ordered by id) until the flag or past it.
    for await (const item of paginate.items(context.api, "GET /api/admin/moderation/flags", {
      limit: 200,
    })) {
      if (item.id === id) flag = item;
      if (item.id >= id) break;
    }
  } catch (error) {
    const message = context.fail(error);
    if (message !== undefined) root.append(h("p", { class: "error" }, message));
    return;
  }
  if (!flag) {
    root.append(h("p", { class: "error" }, `There is no moderation flag ${id}.`));
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
        ["Message", `${current.messageId} in room ${current.roomId}`],
        ["Flagged", time(current.createdAt)],
      ]),
      h("h2", null, "Message"),
      messageHolder,
      editsHolder,
      h("div", { class: "actions" }, reviewButtons(context, current, render)),
    );
  };
  render(flag);
  void showEdits(context, flag, editsHolder);

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
