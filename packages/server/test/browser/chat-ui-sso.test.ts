/**
 * Single sign-on from the chat page, in Debian's Chromium against the real server (SQLite) and a
 * local OpenID Connect provider (oauth2-mock-server, which signs in whoever asks): the sign-in
 * screen offers "Sign in with <name>", and the round trip through the provider lands on the page
 * signed in, its stream running on the session cookie.
 */
import type { AddressInfo } from "node:net";
import { OAuth2Server } from "oauth2-mock-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startChatHarness, type ChatHarness } from "./chat-ui-harness.js";

describe("single sign-on on the chat page in Chromium", { tags: ["chromium"] }, () => {
  let provider: OAuth2Server;
  let h: ChatHarness;

  beforeAll(async () => {
    provider = new OAuth2Server();
    await provider.issuer.keys.generate("RS256");
    await provider.start(0, "127.0.0.1");
    provider.issuer.url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    provider.service.on("beforeTokenSigning", (token: { payload: Record<string, unknown> }) => {
      Object.assign(token.payload, {
        sub: "gina-at-acme",
        preferred_username: "gina",
        name: "Gina",
      });
    });
    const port = await freePort();
    h = await startChatHarness(
      {
        oidcIssuer: provider.issuer.url,
        oidcClientId: "parley-chat",
        oidcClientSecret: "a client secret",
        oidcName: "Acme SSO",
        oidcAllowSignup: true,
        publicBaseUrl: `http://127.0.0.1:${port}`,
      },
      port,
    );
  });

  afterAll(async () => {
    await h?.close();
    await provider?.stop();
    expect(h?.problems ?? []).toEqual([]);
  });

  it("offers the provider by name and comes back from it signed in, stream and all", async () => {
    const page = await h.openPage("gina");
    await page.getByRole("link", { name: "Sign in with Acme SSO" }).click();
    await page.locator("#me").waitFor();
    expect(new URL(page.url()).pathname).toBe("/app/");
    const me = (await page.locator("#me").textContent()) ?? "";
    expect(me.length).toBeGreaterThan(0);
    // The stream authenticated with the cookie: the user is present in a room they make.
    await page.locator("#new-room").fill("sso-room");
    await page.locator("#new-room").press("Enter");
    await page.locator("#present .person", { hasText: me }).waitFor();
  }, 60_000);
});
