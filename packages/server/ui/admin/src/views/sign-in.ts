import {
  anonymousApi,
  createApi,
  currentSession,
  describeError,
  isStatus,
  normalizeToken,
  storeToken,
  type Credentials,
} from "../api.js";
import { clearError, errorBox, showError } from "../context.js";
import { busy, h } from "../dom.js";

/**
 * The sign-in page: a username and password (a session, as on the chat page), single sign-on when
 * the server offers it, or a pasted admin bearer token. Each is checked against the API (the
 * admin UI needs role admin) before the shell shows a page. `notice` explains why the admin is
 * here again (a session or token that stopped working).
 */
export function signInView(
  root: HTMLElement,
  notice: string | undefined,
  signedIn: (credentials: Credentials) => void,
): void {
  const error = errorBox("sign-in-error");
  if (notice !== undefined) showError(error, notice);

  const username = h("input", { id: "username", name: "username", autocomplete: "username" });
  const password = h("input", {
    id: "password",
    name: "password",
    type: "password",
    autocomplete: "current-password",
  });
  const submit = h("button", { type: "submit" }, "Sign in");
  const sso = h("p", { id: "sso", hidden: true });
  const form = h(
    "form",
    { id: "sign-in", class: "card narrow", novalidate: true, "aria-labelledby": "sign-in-title" },
    h("h1", { id: "sign-in-title" }, "Sign in to Parley admin"),
    error,
    h("label", { for: "username" }, "Username"),
    username,
    h("label", { for: "password" }, "Password"),
    password,
    h("div", { class: "buttons" }, submit),
    sso,
  );

  /** Keeps the credentials when they are an admin's; says why not otherwise. */
  const adopt = async (credentials: Credentials): Promise<boolean> => {
    const api = createApi(credentials);
    const { data: me } = await api("GET /api/me");
    if (me.role === "admin") return true;
    // Not kept: the session of someone who may not use this page is ended at once.
    if (credentials.kind === "session") await api("POST /api/auth/logout").catch(() => undefined);
    showError(
      error,
      `You are signed in as ${me.username}, who is not an admin: the admin UI needs role admin.`,
    );
    return false;
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    if (username.value.trim() === "" || password.value === "") {
      showError(error, "Enter your username and password.");
      return;
    }
    void busy(submit, async () => {
      try {
        await anonymousApi()("POST /api/auth/login", {
          username: username.value.trim(),
          password: password.value,
        });
        const session = await currentSession();
        if (session === null) throw new Error("The session cookie was not kept by this browser.");
        if (await adopt(session)) signedIn(session);
      } catch (failure) {
        if (isStatus(failure, 401)) showError(error, "The username or password is wrong.");
        else if (isStatus(failure, 429))
          showError(
            error,
            `${describeError(failure)} Too many failed attempts: wait, then try again.`,
          );
        else showError(error, describeError(failure));
      }
    });
  });

  // Single sign-on, when the server offers it.
  void anonymousApi()("GET /api/auth/providers").then(
    ({ data }) => {
      if (!data.oidc) return;
      const start = `${data.oidc.startUrl}?returnTo=${encodeURIComponent("/admin/")}`;
      sso.append(
        h("a", { class: "button", id: "sso-link", href: start }, `Sign in with ${data.oidc.name}`),
      );
      sso.hidden = false;
    },
    () => undefined,
  );

  const token = h("textarea", {
    id: "token",
    name: "token",
    rows: 3,
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": "token-hint",
  });
  const useToken = h("button", { type: "submit" }, "Sign in with the token");
  const tokenForm = h(
    "form",
    { id: "token-sign-in", novalidate: true },
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
    h("div", { class: "buttons" }, useToken),
  );
  const tokenBox = h(
    "details",
    { id: "use-token", class: "card narrow" },
    h("summary", null, "Use a token instead"),
    tokenForm,
  );
  tokenForm.addEventListener("submit", (event) => {
    event.preventDefault();
    clearError(error);
    const value = normalizeToken(token.value);
    if (value === "") {
      showError(error, "Paste a token first.");
      return;
    }
    void busy(useToken, async () => {
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
      signedIn({ kind: "token", token: value });
    });
  });

  root.replaceChildren(h("main", { id: "main" }, form, tokenBox));
  username.focus();
}
