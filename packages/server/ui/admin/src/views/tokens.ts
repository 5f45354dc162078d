// The Tokens page: the bearer tokens that still work, found by the start of their id or by user,
// each revocable.
import type { ListTokensParams, TokenInfo } from "@parley/client/browser";
import { paginate } from "../api.js";
import { flashFailure, link, type View } from "../context.js";
import { badge, busy, confirmButton, h, row, table, time } from "../dom.js";
import { pagedTable } from "../paged-table.js";

const PAGE_SIZE = 50;
const PREFIX = /^[A-Za-z0-9_-]{1,64}$/;

export const tokensView: View = async (context) => {
  const { root } = context;
  const query = new URLSearchParams(location.search);
  const userIdText = query.get("userId") ?? "";
  const userId = /^[1-9]\d{0,14}$/.test(userIdText) ? Number(userIdText) : undefined;
  const prefix = h("input", {
    id: "token-prefix",
    type: "search",
    autocomplete: "off",
    spellcheck: "false",
    value: query.get("prefix") ?? "",
    placeholder: "the first characters",
    "aria-describedby": "token-prefix-hint",
  });
  const find = h("button", { type: "submit", class: "secondary" }, "Find");
  const tokens = table(["Token ID", "User", "Role", "Issued", "Expires", "Actions"], [], {
    class: "data responsive",
    id: "tokens",
  });
  const list = pagedTable<TokenInfo>(tokens, {
    emptyText: "No token that still works matches.",
    rowOf: (token) => tokenRow(token),
    keyOf: (token) => token.tokenId,
    fail: (error) => context.fail(error),
  });
  const search = h(
    "form",
    { class: "toolbar", role: "search", "aria-label": "Find tokens" },
    h("span", { class: "field" }, h("label", { for: prefix.id }, "Token ID starts with"), prefix),
    find,
  );
  root.append(
    h("h1", null, "Tokens"),
    h(
      "p",
      { class: "lead", id: "token-prefix-hint" },
      "The bearer tokens that still work, by their ID (the tokenId shown when a token is issued): never the tokens themselves. ",
      "Revoke one that leaked; a user's whole set is revoked from the People page.",
    ),
    ...(userId === undefined
      ? []
      : [
          h(
            "p",
            { class: "crumbs" },
            `Tokens of user ${userId} only. `,
            link("/admin/tokens", "Show every user's"),
          ),
        ]),
    search,
    ...list.parts,
  );

  function tokenRow(token: TokenInfo): HTMLTableRowElement {
    const revoke = confirmButton(
      "Revoke",
      `Revoke token ${token.tokenId.slice(0, 8)}… of @${token.username}? Whatever uses it stops working at once.`,
      async () => {
        try {
          await context.api("DELETE /api/admin/tokens/{tokenId}", { tokenId: token.tokenId });
          context.flash(`Token ${token.tokenId.slice(0, 8)}… of @${token.username} is revoked.`);
          context.navigate(`/admin/tokens${location.search}`);
        } catch (error) {
          flashFailure(context, error);
        }
      },
    );
    return row(
      [
        h("code", { class: "token-id", title: token.tokenId }, `${token.tokenId.slice(0, 8)}…`),
        link(`/admin/users?query=${encodeURIComponent(token.username)}`, `@${token.username}`),
        badge(token.role, "none"),
        time(token.issuedAt),
        time(token.expiresAt),
        h("span", { class: "actions" }, revoke),
      ],
      { "data-token-id": token.tokenId },
    );
  }

  const show = (): Promise<void> => {
    const typed = prefix.value.trim();
    const params: ListTokensParams = { limit: PAGE_SIZE };
    if (PREFIX.test(typed)) params.prefix = typed;
    if (userId !== undefined) params.userId = userId;
    const next = new URLSearchParams();
    if (userId !== undefined) next.set("userId", String(userId));
    if (params.prefix !== undefined) next.set("prefix", params.prefix);
    const address = next.size > 0 ? `?${next}` : "";
    if (address !== location.search)
      history.replaceState(null, "", `${location.pathname}${address}`);
    return busy(find, () => list.show(paginate(context.api, "GET /api/admin/tokens", params)));
  };
  search.addEventListener("submit", (event) => {
    event.preventDefault();
    void show();
  });
  await show();
};
