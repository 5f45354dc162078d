/**
 * "Add people" to a room the user is a member of (the only way into a private room): people whose
 * username or name starts with what is typed, each with an Add button
 * (`POST /api/rooms/{roomId}/members`); someone added gets the room at once on their page.
 */
import { describeError, isUnauthorized, type Api, type DirectoryUser, type Room } from "./api.js";
import { h, replaceChildren } from "./dom.js";

export interface AddPeopleOptions {
  api: Api;
  room: Room;
  roomName: string;
  me: string;
  /** Back to the room. */
  back(): void;
  fail(error: unknown): void;
}

export function addPeoplePanel(options: AddPeopleOptions): HTMLElement {
  const query = h("input", {
    id: "add-people-search",
    type: "search",
    placeholder: "Name or username",
    "aria-label": "Find people to add by name or username",
    autocomplete: "off",
  });
  const list = h("ul", { id: "add-people", class: "directory-list", "aria-label": "People" });
  const status = h("p", { class: "hint", role: "status" });
  /** Who was added while the panel is open (their row says so). */
  const added = new Set<number>();

  const add = async (user: DirectoryUser, button: HTMLButtonElement) => {
    button.disabled = true;
    try {
      await options.api.addMember(options.room.id, user.id);
      added.add(user.id);
      button.replaceWith(h("span", { class: "hint added" }, "Added"));
      status.textContent = `${user.displayName} was added to ${options.roomName}.`;
    } catch (error) {
      button.disabled = false;
      // The server's words (already a member, ...); a session that ended goes to sign-in.
      if (isUnauthorized(error)) options.fail(error);
      else status.textContent = describeError(error);
    }
  };

  const load = async () => {
    try {
      const { items } = await options.api.users(query.value.trim());
      const others = items.filter((user) => user.username !== options.me);
      replaceChildren(
        list,
        others.length === 0
          ? h("li", { class: "empty" }, "Nobody by that name.")
          : others.map((user) => {
              const row = h(
                "li",
                { "data-username": user.username },
                h("span", { class: "name" }, user.displayName),
                h("span", { class: "hint" }, `@${user.username}`),
              );
              if (added.has(user.id)) {
                row.append(h("span", { class: "hint added" }, "Added"));
              } else {
                const button = h(
                  "button",
                  { type: "button", "aria-label": `Add ${user.displayName}` },
                  "Add",
                );
                button.addEventListener("click", () => void add(user, button));
                row.append(button);
              }
              return row;
            }),
      );
    } catch (error) {
      options.fail(error);
    }
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  query.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => void load(), 200);
  });
  void load();
  return h(
    "section",
    { class: "directory", "aria-labelledby": "add-people-title" },
    h(
      "button",
      { type: "button", class: "secondary", id: "back-to-room", onclick: () => options.back() },
      `Back to ${options.roomName}`,
    ),
    h("h1", { id: "add-people-title" }, `Add people to ${options.roomName}`),
    query,
    status,
    list,
  );
}
