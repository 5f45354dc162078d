/**
 * The sign-in screen: username and password; "Sign in with <name>" when single sign-on is
 * configured (a link to the server's start route, which comes back to /app/ signed in); a pasted
 * token for bots, scripts and tests. Opened from an invitation link (`/app/#invite=<token>`), it
 * is the form that accepts the invitation: a username and a password of your choice. Opened from
 * a sign-in reset link (`/app/#reset=<token>`, made by an admin), it asks for a new password.
 */
import { describeError, signInApi, type Auth, type Providers } from "./api.js";
import { h, replaceChildren } from "./dom.js";

export interface SignInOptions {
  /** Shown above the form (why the user is here again). */
  notice?: string | undefined;
  /** The invitation's token, from the link. */
  invite?: string | undefined;
  /** A sign-in reset link's token. */
  reset?: string | undefined;
  /** Signed in: the page starts with this. Rejects with the words to show. */
  signedIn(auth: Auth): Promise<void>;
}

/** The CSRF value of the session the browser now holds (after a login or an invitation). */
async function session(): Promise<Auth> {
  return { kind: "session", csrfToken: (await signInApi.csrf()).csrfToken };
}

export function signInScreen(root: HTMLElement, options: SignInOptions): void {
  const error = h(
    "p",
    { id: "sign-in-error", class: "error", role: "alert" },
    options.notice ?? "",
  );
  const attempt = async (button: HTMLButtonElement, go: () => Promise<Auth>) => {
    button.disabled = true;
    error.textContent = "";
    try {
      await options.signedIn(await go());
    } catch (failure) {
      error.textContent = describeError(failure);
      button.disabled = false;
    }
  };
  if (options.reset !== undefined) {
    const reset = options.reset;
    const password = field(
      "reset-password",
      "New password (10 characters or more)",
      "password",
      "new-password",
    );
    const submit = h("button", { type: "submit" }, "Set password and sign in");
    replaceChildren(
      root,
      h(
        "form",
        {
          class: "sign-in",
          onsubmit: (event) => {
            event.preventDefault();
            void attempt(submit, async () => {
              await signInApi.resetPassword(reset, password.input.value);
              // The link is spent: a reload must not offer it again.
              history.replaceState(null, "", location.pathname);
              return session();
            });
          },
        },
        h("h1", null, "Choose a new password"),
        h(
          "p",
          null,
          "An admin reset your sign-in. Choose a new password: it replaces the old one.",
        ),
        password.label,
        password.input,
        submit,
        error,
      ),
    );
    document.title = "New password · Parley";
    password.input.focus();
    return;
  }
  if (options.invite !== undefined) {
    const invite = options.invite;
    const username = field("invite-username", "Username", "text", "username");
    const password = field(
      "invite-password",
      "Password (10 characters or more)",
      "password",
      "new-password",
    );
    const submit = h("button", { type: "submit" }, "Join");
    replaceChildren(
      root,
      h(
        "form",
        {
          class: "sign-in",
          onsubmit: (event) => {
            event.preventDefault();
            void attempt(submit, async () => {
              await signInApi.acceptInvite(
                invite,
                username.input.value.trim(),
                password.input.value,
              );
              // The link is spent: a reload must not offer it again.
              history.replaceState(null, "", location.pathname);
              return session();
            });
          },
        },
        h("h1", null, "Join Parley"),
        h("p", null, "You were invited. Choose a username and a password."),
        username.label,
        username.input,
        password.label,
        password.input,
        submit,
        error,
      ),
    );
    document.title = "Join · Parley";
    username.input.focus();
    return;
  }

  const username = field("username", "Username", "text", "username");
  const password = field("password", "Password", "password", "current-password");
  const submit = h("button", { type: "submit" }, "Sign in");
  const sso = h("div", { class: "sso", id: "sso" });
  const token = h("input", {
    id: "token",
    type: "password",
    autocomplete: "off",
    placeholder: "eyJhbGciOi...",
  });
  const tokenSubmit = h("button", { type: "submit", class: "secondary" }, "Use token");
  replaceChildren(
    root,
    h(
      "div",
      { class: "sign-in" },
      h("h1", null, "Parley"),
      h(
        "form",
        {
          class: "stack",
          onsubmit: (event) => {
            event.preventDefault();
            if (!username.input.value.trim() || !password.input.value) return;
            void attempt(submit, async () => {
              await signInApi.login(username.input.value.trim(), password.input.value);
              return session();
            });
          },
        },
        username.label,
        username.input,
        password.label,
        password.input,
        submit,
      ),
      sso,
      error,
      h(
        "form",
        {
          class: "stack token-sign-in",
          onsubmit: (event) => {
            event.preventDefault();
            const value = token.value.trim().replace(/^bearer\s+/i, "");
            if (!value) return;
            void attempt(tokenSubmit, async () => ({ kind: "token", token: value }));
          },
        },
        h("label", { for: "token" }, "Or, for bots and scripts, a token"),
        h("div", { class: "row" }, token, tokenSubmit),
      ),
    ),
  );
  document.title = "Sign in · Parley";
  username.input.focus();
  void signInApi.providers().then(
    (providers: Providers) => {
      if (!providers.oidc) return;
      replaceChildren(
        sso,
        h(
          "a",
          { class: "button", href: providers.oidc.startUrl },
          `Sign in with ${providers.oidc.name}`,
        ),
      );
    },
    // An older server without the route: passwords and tokens still work.
    () => undefined,
  );
}

function field(id: string, text: string, type: string, autocomplete: string) {
  return {
    label: h("label", { for: id }, text),
    input: h("input", { id, type, autocomplete, required: true }),
  };
}
