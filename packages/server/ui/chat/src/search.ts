/**
 * Search results: each hit with its room, its time and its snippet (the matched words marked);
 * choosing one opens its room at the message. The snippet is the server's escaped text with
 * `<mark>` around the matches: it is parsed inertly and rebuilt from its text and marks alone.
 */
import type { Api, SearchHit } from "./api.js";
import { h } from "./dom.js";

export interface SearchOptions {
  api: Api;
  query: string;
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

export function searchResults(options: SearchOptions): HTMLElement {
  const list = h("ol", { id: "search-results", class: "search-results" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "More results");
  const status = h("p", { class: "hint", role: "status" }, "Searching…");
  let cursor: string | undefined;
  const load = async () => {
    try {
      const page = await options.api.search(options.query, cursor);
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
      status.textContent = "";
      options.fail(error);
    }
  };
  more.addEventListener("click", () => void load());
  void load();
  return h(
    "section",
    { class: "directory", "aria-labelledby": "search-title" },
    h("h1", { id: "search-title" }, `Search: ${options.query}`),
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
