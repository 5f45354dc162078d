import { createApi, describeError, isStatus, normalizeToken, storeToken } from "../api.js";
import { clearError, errorBox, showError } from "../context.js";
import { busy, h } from "../dom.js";

/**
 * The sign-in page: an admin bearer token, checked against the API before it is kept.
 * `notice` explains why the admin is here again (a token that stopped working).
 */
export function signInView(
  root: HTMLElement,
  notice: string | undefined,
  signedIn: () => void,
): void {
  const error = errorBox("sign-in-error");
  if (notice !== undefined) showError(error, notice);
  const token = h("textarea", {
    id: "token",
    name: "token",
    rows: 3,
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": "token-hint",
  });
  const submit = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    { id: "sign-in", class: "card narrow", novalidate: true, "aria-labelledby": "sign-in-title" },
    h("h1", { id: "sign-in-title" }, "Sign in to Parley admin"),
    error,
    h("label", { for: "token" }, "Admin token"),
    token,
    h(
      "p",
      { id: "token-hint", class: "hint" },
      "Paste the admin token ",
      h("code", null, "parley serve"),
      " printed on its first start, or mint one with ",
      h("code", null, "parley token create --role admin --subject <name>"),
      ". It is kept in this tab only and sent to this server alone.",
    ),
    h("div", { class: "buttons" }, submit),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    const value = normalizeToken(token.value);
    if (value === "") {
      showError(error, "Paste a token first.");
      return;
    }
    void busy(submit, async () => {
      try {
        // Any admin route tells whether the token is an admin's; this one works in every edition.
        await createApi(value)("GET /api/admin/users", { limit: 1 });
      } catch (failure) {
        if (isStatus(failure, 401)) {
          showError(
            error,
            "This token was not accepted: it is malformed, expired, revoked, or signed by another server.",
          );
        } else if (isStatus(failure, 403)) {
          showError(
            error,
            "This token works, but not for an admin: the admin UI needs role admin.",
          );
        } else {
          showError(error, describeError(failure));
        }
        return;
      }
      storeToken(value);
      signedIn();
    });
  });
  root.replaceChildren(h("main", { id: "main" }, form));
  token.focus();
}
