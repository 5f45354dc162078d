// The People page: every account with its role and state, and what an admin does about one:
// change the role, disable or enable, reset the sign-in (a link to choose a new password),
// revoke the tokens; and adding someone.
import type { User, UserRole } from "@parley/client/browser";
import { isStatus, paginate } from "../api.js";
import {
  clearError,
  errorBox,
  flashFailure,
  link,
  showError,
  type View,
  type ViewContext,
} from "../context.js";
import {
  badge,
  busy,
  confirmButton,
  copyField,
  h,
  replaceChildren,
  row,
  table,
  time,
} from "../dom.js";

const USER_ROLES: readonly UserRole[] = ["user", "admin", "bot"];

/** A sign-in link just made (reset or new person), shown once on the page that follows. */
let revealed: { username: string; url: string; expiresAt: string } | undefined;

function revealPanel(shown: { username: string; url: string; expiresAt: string }): HTMLElement {
  const panel = h(
    "section",
    { class: "reveal", id: "sign-in-link", "aria-labelledby": "sign-in-link-title" },
    h("h2", { id: "sign-in-link-title" }, `Sign-in link for @${shown.username}`),
    h(
      "p",
      { class: "warning" },
      "Send this link to them by a channel you trust: it lets whoever opens it choose the password. ",
      "It works once, until ",
      time(shown.expiresAt),
      ", and is shown only now.",
    ),
    copyField("sign-in-link-value", "Sign-in link", shown.url),
  );
  const done = h("button", { type: "button", class: "secondary" }, "I have sent it");
  done.addEventListener("click", () => panel.remove());
  panel.append(h("div", { class: "buttons" }, done));
  return panel;
}

export const peopleView: View = async (context) => {
  const { root } = context;
  root.append(h("h1", null, "People"));
  if (revealed) {
    root.append(revealPanel(revealed));
    revealed = undefined;
  }
  const query = new URLSearchParams(location.search).get("query") ?? "";
  const filter = h("input", {
    id: "people-filter",
    type: "search",
    value: query,
    autocomplete: "off",
    placeholder: "username or name",
  });
  const listHolder = h("div", { class: "list", "aria-live": "polite" }, h("p", null, "Loading…"));
  root.append(
    h(
      "form",
      { class: "toolbar", role: "search", "aria-label": "Find people" },
      h("span", { class: "field" }, h("label", { for: filter.id }, "Find"), filter),
    ),
    listHolder,
    addPersonForm(context),
  );

  let users: User[];
  try {
    users = await paginate.all(context.api, "GET /api/admin/users", { limit: 200 });
  } catch (error) {
    const message = context.fail(error);
    if (message !== undefined) replaceChildren(listHolder, h("p", { class: "error" }, message));
    return;
  }
  const draw = (): void => {
    const wanted = filter.value.trim().toLowerCase().replace(/^@/, "");
    const search = wanted === "" ? "" : `?query=${encodeURIComponent(wanted)}`;
    if (search !== location.search) history.replaceState(null, "", `${location.pathname}${search}`);
    const shown = users.filter(
      (user) =>
        wanted === "" ||
        user.username.startsWith(wanted) ||
        user.displayName.toLowerCase().startsWith(wanted),
    );
    replaceChildren(
      listHolder,
      shown.length === 0
        ? h("p", { class: "empty" }, "Nobody matches.")
        : table(
            ["Username", "Name", "Role", "State", "Created", "Actions"],
            shown.map((user) => personRow(context, user)),
            { id: "people", class: "data responsive" },
          ),
    );
  };
  filter.addEventListener("input", draw);
  filter.form?.addEventListener("submit", (event) => event.preventDefault());
  draw();
};

function personRow(context: ViewContext, user: User): HTMLTableRowElement {
  const reload = (): void => context.navigate(`/admin/users${location.search}`);
  const role = h(
    "select",
    { id: `role-${user.id}`, "aria-label": `Role of @${user.username}` },
    USER_ROLES.map((r) => h("option", { value: r, selected: r === user.role }, r)),
  );
  role.addEventListener("change", () => {
    const chosen = role.value as UserRole;
    role.disabled = true;
    void context.api("PATCH /api/admin/users/{id}", { id: user.id, role: chosen }).then(
      ({ data }) => {
        context.flash(
          `@${data.username} is now ${data.role}: tokens issued for the old role no longer work.`,
        );
        reload();
      },
      (error: unknown) => {
        role.value = user.role;
        role.disabled = false;
        flashFailure(context, error);
      },
    );
  });
  const toggle =
    user.status === "active"
      ? confirmButton(
          "Disable",
          `Disable @${user.username}? They are signed out everywhere and their tokens stop working.`,
          async () => {
            try {
              await context.api("POST /api/admin/users/{id}/disable", { id: user.id });
              context.flash(`@${user.username} is disabled.`);
              reload();
            } catch (error) {
              flashFailure(context, error);
            }
          },
        )
      : enableButton(context, user, reload);
  const reset = confirmButton(
    "Reset sign-in",
    `Reset the sign-in of @${user.username}? Their sessions end and their password stops working; you get a link for them to choose a new one.`,
    async () => {
      try {
        const { data } = await context.api("POST /api/admin/users/{id}/reset-sign-in", {
          id: user.id,
        });
        revealed = { username: user.username, url: data.url, expiresAt: data.expiresAt };
        context.flash(`The sign-in of @${user.username} was reset.`);
        reload();
      } catch (error) {
        flashFailure(context, error);
      }
    },
    { class: "secondary" },
  );
  const revoke = confirmButton(
    "Revoke tokens",
    `Revoke every token @${user.username} holds now? Scripts and bots using them stop working.`,
    async () => {
      try {
        await context.api("POST /api/admin/users/{id}/revoke-tokens", { id: user.id });
        context.flash(`Every token of @${user.username} is revoked.`);
        reload();
      } catch (error) {
        flashFailure(context, error);
      }
    },
    { class: "secondary" },
  );
  return row(
    [
      h("span", { class: "username" }, `@${user.username}`),
      user.displayName,
      role,
      badge(user.status === "active" ? "enabled" : user.status),
      time(user.createdAt),
      h(
        "span",
        { class: "actions" },
        toggle,
        reset,
        revoke,
        link(
          `/admin/tokens?userId=${user.id}`,
          "Tokens",
          h("span", { class: "visually-hidden" }, ` of @${user.username}`),
        ),
      ),
    ],
    { "data-user-id": user.id },
  );
}

function enableButton(context: ViewContext, user: User, done: () => void): HTMLButtonElement {
  const button = h("button", { type: "button", class: "secondary" }, "Enable");
  button.addEventListener("click", () =>
    busy(button, async () => {
      try {
        await context.api("POST /api/admin/users/{id}/enable", { id: user.id });
        context.flash(`@${user.username} is enabled again.`);
        done();
      } catch (error) {
        flashFailure(context, error);
      }
    }),
  );
  return button;
}

/**
 * Adds a person: the account, then (for a person, not a bot) a sign-in link on which they choose
 * their password, shown once.
 */
function addPersonForm(context: ViewContext): HTMLElement {
  const error = errorBox("person-form-error");
  const username = h("input", {
    id: "person-username",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    "aria-describedby": "person-username-hint",
  });
  const displayName = h("input", { id: "person-name", autocomplete: "off" });
  const role = h(
    "select",
    { id: "person-role" },
    USER_ROLES.map((r) => h("option", { value: r, selected: r === "user" }, r)),
  );
  const submit = h("button", { type: "submit" }, "Add person");
  const form = h(
    "form",
    { id: "person-form", class: "card", novalidate: true, "aria-labelledby": "person-form-title" },
    h("h2", { id: "person-form-title" }, "Add someone"),
    error,
    h("label", { for: username.id }, "Username"),
    username,
    h(
      "small",
      { id: "person-username-hint", class: "hint" },
      "Lowercase letters, digits, “.”, “_” and “-”. A person gets a link to choose their password; a bot gets none (issue it a token).",
    ),
    h("label", { for: displayName.id }, "Name (optional)"),
    displayName,
    h("label", { for: role.id }, "Role"),
    role,
    h("div", { class: "buttons" }, submit),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    const chosen = role.value as UserRole;
    void busy(submit, async () => {
      try {
        const name = displayName.value.trim();
        const { data: user } = await context.api("POST /api/admin/users", {
          username: username.value.trim().toLowerCase(),
          role: chosen,
          ...(name === "" ? {} : { displayName: name }),
        });
        if (chosen !== "bot") {
          const { data } = await context.api("POST /api/admin/users/{id}/reset-sign-in", {
            id: user.id,
          });
          revealed = { username: user.username, url: data.url, expiresAt: data.expiresAt };
        }
        context.flash(`@${user.username} was added.`);
        context.navigate("/admin/users");
      } catch (failure) {
        showError(
          error,
          isStatus(failure, 400)
            ? `${context.fail(failure)} (a username is lowercase letters, digits, “.”, “_” and “-”)`
            : context.fail(failure),
        );
      }
    });
  });
  return form;
}
