/**
 * Search results: each hit with its room, its time and its snippet (the matched words marked);
 * choosing one opens its room at the message. The snippet is the server's escaped text with
 * `<mark>` around the matches: it is parsed inertly and rebuilt from its text and marks alone.
 * Above the results, the filters GET /api/search takes: the words, one room or DM, a sender, and
 * a day the messages were written before.
 */
import type { Api, SearchFilters, SearchHit } from "./api.js";
import { h } from "./dom.js";

export interface SearchOptions {
  api: Api;
  query: string;
  /** The rooms and DMs the user is in, to narrow the search to one. */
  rooms: { id: number; name: string }[];
  roomName(roomId: number): string;
  open(hit: SearchHit): void;
  fail(error: unknown): void;
}

/** Text and <mark> elements only, whatever the snippet holds. */
export function snippetNodes(snippet: string): Node[] {
  const parsed = new DOMParser().parseFromString(`<body>${snippet}</body>`, "text/html");
  return [...parsed.body.childNodes].map((node) =>
    node.nodeName === "MARK"
      ? h("mark", null, node.textContent ?? "")
      : document.createTextNode(node.textContent ?? ""),
  );
}

/** A labelled field of the filter form. */
function field(label: string, control: HTMLElement): HTMLElement {
  return h("label", { class: "field" }, h("span", null, label), control);
}

export function searchResults(options: SearchOptions): HTMLElement {
  const list = h("ol", { id: "search-results", class: "search-results" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "More results");
  const status = h("p", { class: "hint", role: "status" }, "Searching…");
  const words = h("input", { id: "search-words", type: "search" });
  words.value = options.query;
  const room = h(
    "select",
    { id: "search-room" },
    h("option", { value: "" }, "All my rooms"),
    options.rooms.map((candidate) => h("option", { value: candidate.id }, candidate.name)),
  );
  const from = h("input", {
    id: "search-from",
    placeholder: "username",
    autocomplete: "off",
  });
  const before = h("input", { id: "search-before", type: "date" });
  const title = h("h1", { id: "search-title" }, `Search: ${options.query}`);
  let query = options.query;
  let filters: SearchFilters = {};
  let cursor: string | undefined;
  let run = 0;

  const load = async () => {
    const mine = run;
    try {
      const page = await options.api.search(query, filters, cursor);
      if (mine !== run) return;
      cursor = page.nextCursor ?? undefined;
      more.hidden = cursor === undefined;
      list.append(
        ...page.items.map((hit) =>
          h(
            "li",
            null,
            h(
              "button",
              {
                type: "button",
                class: "search-hit",
                "data-message-id": hit.messageId,
                onclick: () => options.open(hit),
              },
              h(
                "span",
                { class: "hit-head" },
                h("strong", null, options.roomName(hit.roomId)),
                h("time", { datetime: hit.createdAt }, new Date(hit.createdAt).toLocaleString()),
              ),
              h("span", { class: "snippet" }, snippetNodes(hit.snippet)),
            ),
          ),
        ),
      );
      const count = list.childElementCount;
      status.textContent =
        count === 0
          ? "Nothing found."
          : count === 1
            ? "1 message found."
            : `${count} messages found.`;
    } catch (error) {
      if (mine !== run) return;
      status.textContent = "";
      options.fail(error);
    }
  };

  /** A new search from the form: the words and filters as they are now. */
  const again = () => {
    const text = words.value.trim();
    if (!text) return;
    query = text;
    // The day picked, from its start in the user's time zone.
    const day = before.value ? new Date(`${before.value}T00:00:00`) : undefined;
    filters = {
      roomId: room.value ? Number(room.value) : undefined,
      from: from.value.trim() || undefined,
      before: day && !Number.isNaN(day.getTime()) ? day.toISOString() : undefined,
    };
    title.textContent = `Search: ${query}`;
    cursor = undefined;
    run++;
    list.replaceChildren();
    more.hidden = true;
    status.textContent = "Searching…";
    void load();
  };

  more.addEventListener("click", () => void load());
  void load();
  return h(
    "section",
    { class: "directory", "aria-labelledby": "search-title" },
    title,
    h(
      "form",
      {
        id: "search-filters",
        class: "search-filters",
        "aria-label": "Search filters",
        onsubmit: (event) => {
          event.preventDefault();
          again();
        },
      },
      field("Words", words),
      field("In", room),
      field("From", from),
      field("Before", before),
      h("button", { type: "submit" }, "Search"),
    ),
    status,
    list,
    more,
  );
}

/** The header's search box. */
export function searchBox(search: (query: string) => void): HTMLElement {
  const input = h("input", {
    id: "search",
    type: "search",
    placeholder: "Search messages",
    "aria-label": "Search messages",
  });
  return h(
    "form",
    {
      role: "search",
      class: "search",
      onsubmit: (event) => {
        event.preventDefault();
        const query = input.value.trim();
        if (query) search(query);
      },
    },
    input,
  );
}
