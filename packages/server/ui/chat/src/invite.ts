/**
 * "Invite someone" (admins): a single-use link to hand over, which opens the chat page's join
 * form; the invited person picks a username and a password there.
 */
import type { Api } from "./api.js";
import { h } from "./dom.js";

export function invitePanel(api: Api, fail: (error: unknown) => void): HTMLElement {
  const name = h("input", {
    id: "invite-name",
    placeholder: "Their name (optional)",
    "aria-label": "Their name (optional)",
  });
  const role = h(
    "select",
    { id: "invite-role", "aria-label": "Role" },
    h("option", { value: "user" }, "user"),
    h("option", { value: "admin" }, "admin"),
  );
  const link = h("input", {
    id: "invite-link",
    readonly: true,
    "aria-label": "Invitation link",
    hidden: true,
  });
  const note = h("p", { class: "hint", role: "status" });
  return h(
    "section",
    { class: "directory", "aria-labelledby": "invite-title" },
    h("h1", { id: "invite-title" }, "Invite someone"),
    h(
      "form",
      {
        class: "row",
        onsubmit: (event) => {
          event.preventDefault();
          api
            .invite(role.value === "admin" ? "admin" : "user", name.value.trim())
            .then((invite) => {
              link.value = invite.url;
              link.hidden = false;
              link.select();
              note.textContent = `Send this link to them: it works once, until ${new Date(invite.expiresAt).toLocaleString()}.`;
            }, fail);
        },
      },
      name,
      role,
      h("button", { type: "submit", id: "create-invite" }, "Create link"),
    ),
    link,
    note,
  );
}
