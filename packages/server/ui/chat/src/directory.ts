/**
 * Finding people and rooms from the room list: "Browse rooms" lists the public rooms (filtered by
 * a name prefix) with a Join button each; "Message someone" searches the people directory as you
 * type and opens a DM with the one you pick.
 */
import type { Api, DirectoryUser, Room } from "./api.js";
import { h, replaceChildren } from "./dom.js";

export interface DirectoryOptions {
  api: Api;
  /** A room joined or a DM opened: the page lists it and shows it. */
  opened(room: Room): void;
  fail(error: unknown): void;
}

/** Runs `task` once the user stops typing for a moment (so a search is not sent per key). */
function debounced(task: () => void, ms = 200): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(task, ms);
  };
}

/** The room browser: a search box and the public rooms, each with its member count. */
export function roomBrowser(options: DirectoryOptions): HTMLElement {
  const query = h("input", {
    id: "room-search",
    type: "search",
    placeholder: "Filter by name",
    "aria-label": "Filter public rooms by name",
  });
  const list = h("ul", {
    id: "public-rooms",
    class: "directory-list",
    "aria-label": "Public rooms",
  });
  const load = async () => {
    try {
      const page = await options.api.publicRooms(query.value.trim());
      replaceChildren(
        list,
        page.items.length === 0
          ? h("li", { class: "empty" }, "No public room by that name.")
          : page.items.map((room) =>
              h(
                "li",
                { "data-public-room-id": room.id },
                h("span", { class: "name" }, room.name ?? ""),
                h(
                  "span",
                  { class: "hint" },
                  room.memberCount === 1 ? "1 member" : `${room.memberCount ?? 0} members`,
                ),
                room.joined
                  ? h(
                      "button",
                      { type: "button", class: "secondary", onclick: () => options.opened(room) },
                      "Open",
                    )
                  : h(
                      "button",
                      {
                        type: "button",
                        onclick: () => {
                          options.api.join(room.id).then(options.opened, options.fail);
                        },
                        "aria-label": `Join ${room.name ?? ""}`,
                      },
                      "Join",
                    ),
              ),
            ),
      );
    } catch (error) {
      options.fail(error);
    }
  };
  query.addEventListener(
    "input",
    debounced(() => void load()),
  );
  void load();
  return h(
    "section",
    { class: "directory", "aria-labelledby": "browse-title" },
    h("h1", { id: "browse-title" }, "Public rooms"),
    query,
    list,
  );
}

/** "Message someone": people whose username or name starts with what is typed. */
export function peopleFinder(options: DirectoryOptions & { me: string }): HTMLElement {
  const query = h("input", {
    id: "people-search",
    type: "search",
    placeholder: "Name or username",
    "aria-label": "Find people by name or username",
    autocomplete: "off",
  });
  const list = h("ul", { id: "people", class: "directory-list", "aria-label": "People" });
  const open = (user: DirectoryUser) => {
    options.api.openDm(user.username).then(options.opened, options.fail);
  };
  const load = async () => {
    try {
      const { items } = await options.api.users(query.value.trim());
      const others = items.filter((user) => user.username !== options.me);
      replaceChildren(
        list,
        others.length === 0
          ? h("li", { class: "empty" }, "Nobody by that name.")
          : others.map((user) =>
              h(
                "li",
                { "data-username": user.username },
                h("span", { class: "name" }, user.displayName),
                h("span", { class: "hint" }, `@${user.username}`),
                h(
                  "button",
                  {
                    type: "button",
                    onclick: () => open(user),
                    "aria-label": `Message ${user.displayName}`,
                  },
                  "Message",
                ),
              ),
            ),
      );
    } catch (error) {
      options.fail(error);
    }
  };
  query.addEventListener(
    "input",
    debounced(() => void load()),
  );
  void load();
  return h(
    "section",
    { class: "directory", "aria-labelledby": "people-title" },
    h("h1", { id: "people-title" }, "Message someone"),
    query,
    list,
  );
}
