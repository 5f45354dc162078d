// Choosing rooms by name: the endpoint form's room filter.
import type { Room } from "@parley/client/browser";
import { h } from "../dom.js";
import { byId, roomName } from "../rooms.js";

export interface RoomPicker {
  element: HTMLElement;
  /** The chosen room ids, or null for none (every room). */
  read(): number[] | null;
}

/**
 * The rooms chosen so far, each with a Remove button, and a field that suggests room names as
 * they are typed (a datalist) with an Add button; Enter in the field adds too. `rooms` arrives
 * after the form is drawn: until then chosen rooms show as their ids.
 */
export function roomPicker(
  prefix: string,
  rooms: Promise<Room[]>,
  chosen: readonly number[] | null,
): RoomPicker {
  const ids: number[] = [...(chosen ?? [])];
  let known = new Map<number, Room>();
  const listId = `${prefix}-room-options`;
  const input = h("input", {
    id: `${prefix}-room-add`,
    list: listId,
    autocomplete: "off",
    placeholder: "type a room's name",
    "aria-describedby": `${prefix}-room-hint ${prefix}-room-status`,
  });
  const options = h("datalist", { id: listId });
  const add = h("button", { type: "button", class: "secondary" }, "Add room");
  const list = h("ul", { class: "chosen-rooms", id: `${prefix}-rooms-chosen` });
  const status = h("p", { class: "hint", id: `${prefix}-room-status`, role: "status" });

  const draw = (): void => {
    list.replaceChildren(
      ...ids.map((id) => {
        const name = known.size === 0 ? `room ${id}` : roomName(known, id);
        const remove = h("button", { type: "button", class: "link" }, "Remove");
        remove.setAttribute("aria-label", `Remove ${name}`);
        remove.addEventListener("click", () => {
          ids.splice(ids.indexOf(id), 1);
          draw();
          status.textContent = `${name} removed.`;
          input.focus();
        });
        return h(
          "li",
          { "data-room-id": id },
          h("span", { class: "room-name" }, name),
          " ",
          remove,
        );
      }),
    );
    if (ids.length === 0) list.append(h("li", { class: "muted" }, "Every room"));
  };

  const addTyped = (): void => {
    const typed = input.value.trim();
    if (typed === "") return;
    const wanted = typed.replace(/^#/, "").toLowerCase();
    const room =
      [...known.values()].find((r) => (r.name ?? "").toLowerCase() === wanted) ??
      (/^\d+$/.test(wanted) ? known.get(Number(wanted)) : undefined);
    if (!room) {
      status.textContent = `There is no room named “${typed}”.`;
      return;
    }
    if (!ids.includes(room.id)) ids.push(room.id);
    input.value = "";
    draw();
    status.textContent = `${room.name ?? `room ${room.id}`} added.`;
  };
  add.addEventListener("click", addTyped);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      addTyped();
    }
  });

  void rooms.then(
    (loaded) => {
      known = byId(loaded);
      options.replaceChildren(
        ...loaded.map((room) => h("option", { value: room.name ?? String(room.id) })),
      );
      draw();
    },
    () => {
      status.textContent = "The rooms could not be loaded: reload the page to choose rooms.";
    },
  );
  draw();

  const element = h(
    "fieldset",
    { class: "rooms", "aria-describedby": `${prefix}-room-hint` },
    h("legend", null, "Room filter"),
    h(
      "small",
      { id: `${prefix}-room-hint`, class: "hint" },
      "Events of other rooms are not sent (events without a room always are). None chosen: every room.",
    ),
    list,
    h("label", { for: input.id }, "Add a room"),
    h("span", { class: "inline" }, input, add),
    options,
    status,
  );
  return { element, read: () => (ids.length === 0 ? null : [...ids]) };
}
