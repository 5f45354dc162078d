/**
 * Parley's admin UI: one page, routed in the browser. `/admin/...` paths are real URLs (the
 * server answers the page for each), so a deep link such as `/admin/moderation/12` opens the flag
 * directly, after sign-in when needed.
 */
import {
  createApi,
  currentSession,
  describeError,
  forgetToken,
  isStatus,
  storedToken,
  type Credentials,
} from "./api.js";
import { link, type View, type ViewContext } from "./context.js";
import { h, refreshRelativeTimes, replaceChildren } from "./dom.js";
import { deliverySearchView } from "./views/delivery-search.js";
import { inboundView } from "./views/inbound.js";
import { flagView, moderationView } from "./views/moderation.js";
import { peopleView } from "./views/people.js";
import { roomsView } from "./views/rooms.js";
import { signInView } from "./views/sign-in.js";
import { tokensView } from "./views/tokens.js";
import { deliveryView, webhookDetailView } from "./views/webhook-detail.js";
import { webhooksView } from "./views/webhook-list.js";

const ROUTES: [RegExp, View, string][] = [
  [/^\/admin\/webhooks\/?$/, webhooksView, "webhooks"],
  [/^\/admin\/webhooks\/(\d+)\/?$/, webhookDetailView, "webhooks"],
  [/^\/admin\/webhooks\/(\d+)\/deliveries\/(\d+)\/?$/, deliveryView, "webhooks"],
  [/^\/admin\/deliveries\/?$/, deliverySearchView, "deliveries"],
  [/^\/admin\/inbound\/?$/, inboundView, "inbound"],
  [/^\/admin\/moderation\/?$/, moderationView, "moderation"],
  [/^\/admin\/moderation\/(\d+)\/?$/, flagView, "moderation"],
  [/^\/admin\/users\/?$/, peopleView, "users"],
  [/^\/admin\/tokens\/?$/, tokensView, "tokens"],
  [/^\/admin\/rooms\/?$/, roomsView, "rooms"],
];

const NAV: [string, string, string][] = [
  ["webhooks", "/admin/webhooks", "Outbound webhooks"],
  ["deliveries", "/admin/deliveries", "Delivery search"],
  ["inbound", "/admin/inbound", "Inbound webhooks"],
  ["moderation", "/admin/moderation", "Moderation"],
  ["users", "/admin/users", "People"],
  ["tokens", "/admin/tokens", "Tokens"],
  ["rooms", "/admin/rooms", "Rooms"],
];

const app = document.getElementById("app")!;
let flashed: { message: string; kind: "ok" | "error" } | undefined;
/** Counts renders: a page still loading when the next one starts is never shown. */
let renders = 0;

/**
 * How this tab is signed in: undefined until looked up (a stored token, else the session cookie
 * the browser may hold, from a sign-in or single sign-on), null when it is not.
 */
let credentials: Credentials | null | undefined;

function signOut(notice?: string): void {
  const ending = credentials;
  forgetToken();
  credentials = null;
  flashed = undefined;
  // End the session on the server too (its cookie is HttpOnly: only the server can clear it).
  if (ending?.kind === "session") {
    void createApi(ending)("POST /api/auth/logout").then(
      () => render(notice),
      () => render(notice),
    );
    return;
  }
  render(notice);
}

/** Finds the tab's credentials, then renders; a session must be an admin's. */
async function lookUpCredentials(): Promise<void> {
  const token = storedToken();
  if (token !== null) {
    credentials = { kind: "token", token };
  } else {
    try {
      const session = await currentSession();
      credentials =
        session !== null && (await createApi(session)("GET /api/me")).data.role === "admin"
          ? session
          : null;
    } catch {
      credentials = null;
    }
  }
  render();
}

function navigate(path: string, keepFlash = true): void {
  if (!keepFlash) flashed = undefined;
  if (path !== location.pathname + location.search) history.pushState(null, "", path);
  render();
}

function render(notice?: string): void {
  const current = ++renders;
  if (credentials === undefined) {
    void lookUpCredentials();
    return;
  }
  if (credentials === null) {
    signInView(app, notice, (signedIn) => {
      credentials = signedIn;
      render();
    });
    document.title = "Sign in · Parley admin";
    return;
  }
  const signedIn = credentials;
  if (location.pathname === "/admin/" || location.pathname === "/admin") {
    history.replaceState(null, "", "/admin/webhooks");
  }

  const path = location.pathname;
  const match = ROUTES.map(([pattern, view, section]) => ({
    found: pattern.exec(path),
    view,
    section,
  })).find((route) => route.found !== null);

  const signOutButton = h("button", { type: "button", class: "link", id: "sign-out" }, "Sign out");
  signOutButton.addEventListener("click", () => signOut());
  const flash = h("div", { id: "flash", role: "status", "aria-live": "polite" });
  if (flashed) {
    flash.append(h("p", { class: `flash flash-${flashed.kind}` }, flashed.message));
  }
  const page = h("div", { class: "page" });
  const main = h("main", { id: "main" }, flash, page);
  replaceChildren(
    app,
    h(
      "header",
      { class: "top" },
      h("a", { class: "brand", href: "/admin/webhooks", "data-nav": true }, "Parley admin"),
      h(
        "nav",
        { "aria-label": "Sections" },
        NAV.map(([section, href, label]) => {
          const a = link(href, label);
          if (match?.section === section) a.setAttribute("aria-current", "page");
          return a;
        }),
      ),
      signOutButton,
    ),
    main,
  );

  if (!match) {
    document.title = "Not found · Parley admin";
    page.append(
      h("h1", null, "No such page"),
      h(
        "p",
        null,
        "Nothing lives at ",
        h("code", null, path),
        ". ",
        link("/admin/webhooks", "Go to the webhooks"),
      ),
    );
    return;
  }
  const heading = NAV.find(([section]) => section === match.section)?.[2] ?? "Parley";
  document.title = `${heading} · Parley admin`;

  const context: ViewContext = {
    api: createApi(signedIn),
    root: page,
    navigate: (to) => navigate(to),
    flash(message, kind = "ok") {
      flashed = { message, kind };
      if (current !== renders) return;
      replaceChildren(flash, h("p", { class: `flash flash-${kind}` }, message));
    },
    fail(error) {
      if (isStatus(error, 401)) {
        if (current === renders) {
          signOut(
            signedIn.kind === "token"
              ? "The server no longer accepts your token (it expired or was revoked): sign in again."
              : "Your session ended (you signed out elsewhere, or it expired): sign in again.",
          );
        }
        return undefined;
      }
      return describeError(error);
    },
  };
  match.view(context, match.found!.slice(1)).catch((error: unknown) => {
    const message = context.fail(error);
    if (message !== undefined && current === renders) {
      page.append(h("p", { class: "error", role: "alert" }, message));
    }
  });
}

document.addEventListener("click", (event) => {
  if (event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const target = event.target instanceof Element ? event.target.closest("a[data-nav]") : null;
  if (!(target instanceof HTMLAnchorElement)) return;
  event.preventDefault();
  navigate(target.getAttribute("href")!, false);
});

// "3 minutes ago" stays true while the page is open.
setInterval(() => refreshRelativeTimes(), 30_000);

// Escape dismisses a time's tooltip (shown while the time has the focus).
document.addEventListener("keydown", (event) => {
  const active = document.activeElement;
  if (event.key === "Escape" && active instanceof HTMLElement && active.matches("time.when"))
    active.blur();
});

window.addEventListener("popstate", () => {
  flashed = undefined;
  render();
});

render();
