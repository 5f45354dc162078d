// The Rooms page: every room (private ones too) and direct message, and deleting one.
import type { Room } from "@parley/client/browser";
import { paginate } from "../api.js";
import { flashFailure, type View } from "../context.js";
import { badge, busy, confirmButton, h, row, table, time } from "../dom.js";
import { pagedTable } from "../paged-table.js";

const PAGE_SIZE = 50;

function roomTitle(room: Room): string {
  if (room.name !== null) return room.name;
  return room.peer === null ? "direct message" : `direct message with @${room.peer.username}`;
}

export const roomsView: View = async (context) => {
  const { root } = context;
  const query = new URLSearchParams(location.search);
  const name = h("input", {
    id: "room-filter",
    type: "search",
    autocomplete: "off",
    value: query.get("query") ?? "",
    placeholder: "the start of a name",
  });
  const kind = h(
    "select",
    { id: "room-kind" },
    h("option", { value: "room", selected: query.get("kind") !== "dm" }, "Rooms"),
    h("option", { value: "dm", selected: query.get("kind") === "dm" }, "Direct messages"),
  );
  const find = h("button", { type: "submit", class: "secondary" }, "Find");
  const rooms = table(["Name", "Visibility", "Members", "Created by", "Created", "Actions"], [], {
    class: "data responsive",
    id: "rooms",
  });
  const list = pagedTable<Room>(rooms, {
    emptyText: "No room matches.",
    rowOf: (room) => roomRow(room),
    keyOf: (room) => String(room.id),
    fail: (error) => context.fail(error),
  });
  const search = h(
    "form",
    { class: "toolbar", role: "search", "aria-label": "Find rooms" },
    h("span", { class: "field" }, h("label", { for: name.id }, "Name starts with"), name),
    h("span", { class: "field" }, h("label", { for: kind.id }, "Show"), kind),
    find,
  );
  root.append(
    h("h1", null, "Rooms"),
    h(
      "p",
      { class: "lead" },
      "Every room, private ones included, oldest first. Deleting one hides it and its messages from everyone, for good, and fires ADMIN_ROOM_DELETED.",
    ),
    search,
    ...list.parts,
  );

  function roomRow(room: Room): HTMLTableRowElement {
    const title = roomTitle(room);
    const remove = confirmButton(
      "Delete",
      `Delete “${title}”? Its messages and files are gone for every member; this cannot be undone.`,
      async () => {
        try {
          await context.api("DELETE /api/admin/rooms/{roomId}", { roomId: room.id });
          context.flash(`“${title}” was deleted.`);
          context.navigate(`/admin/rooms${location.search}`);
        } catch (error) {
          flashFailure(context, error);
        }
      },
    );
    return row(
      [
        h("span", { class: "room-title" }, title),
        badge(room.visibility, room.visibility === "private" ? "none" : "enabled"),
        String(room.memberCount),
        `@${room.createdBy}`,
        time(room.createdAt),
        h("span", { class: "actions" }, remove),
      ],
      { "data-room-id": room.id },
    );
  }

  const show = (): Promise<void> => {
    const typed = name.value.trim();
    const next = new URLSearchParams();
    if (typed !== "") next.set("query", typed);
    if (kind.value === "dm") next.set("kind", "dm");
    const address = next.size > 0 ? `?${next}` : "";
    if (address !== location.search)
      history.replaceState(null, "", `${location.pathname}${address}`);
    return busy(find, () =>
      list.show(
        paginate(context.api, "GET /api/admin/rooms", {
          limit: PAGE_SIZE,
          kind: kind.value === "dm" ? "dm" : "room",
          ...(typed === "" ? {} : { query: typed }),
        }),
      ),
    );
  };
  search.addEventListener("submit", (event) => {
    event.preventDefault();
    void show();
  });
  kind.addEventListener("change", () => void show());
  await show();
};
