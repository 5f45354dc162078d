import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { runCli as parley } from "../helpers/run-cli.js";
import { createTestPki } from "../helpers/test-pki.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

describe("parley webhooks create|update with receiver credentials", () => {
  let c: ClientApp;
  let env: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    c = await startClientApp(SQLITE);
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-cli-tls-"));
  });
  afterAll(async () => {
    await c?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("takes OAuth 2.0 and a client certificate from flags (the secret from the environment), shows them masked, and removes them", async () => {
    const pki = createTestPki();
    const client = pki.client("cli-client");
    fs.writeFileSync(path.join(dir, "client.crt"), client.cert);
    fs.writeFileSync(path.join(dir, "client.key"), client.key);
    fs.writeFileSync(path.join(dir, "ca.crt"), pki.ca.cert);
    const created = await parley(
      [
        "webhooks",
        "create",
        "--name",
        "enterprise",
        "--url",
        "https://hooks.example.com/in",
        "--events",
        "MESSAGE_CREATED",
        "--auth",
        "oauth2",
        "--token-url",
        "https://idp.example.com/oauth2/token",
        "--client-id",
        "parley",
        "--client-secret",
        "env:IDP_SECRET",
        "--scope",
        "hooks.write",
        "--client-cert",
        path.join(dir, "client.crt"),
        "--client-key",
        path.join(dir, "client.key"),
        "--ca",
        path.join(dir, "ca.crt"),
      ],
      { ...env, IDP_SECRET: "client-secret-from-env-1234" },
    );
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(
      "auth: OAuth 2.0 client parley at https://idp.example.com/oauth2/token (secret ****1234, scope hooks.write)",
    );
    expect(created.stdout).toContain("client certificate: O=Parley Test, CN=cli-client, expires ");
    expect(created.stdout).not.toContain("client-secret-from-env");
    const id = /Created webhook (\d+)/.exec(created.stdout)![1]!;

    const removed = await parley(
      ["webhooks", "update", id, "--auth", "none", "--no-tls", "--json"],
      env,
    );
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ auth: null, tls: null });

    const unset = await parley(
      ["webhooks", "update", id, "--auth", "bearer", "--auth-token", "env:NOT_SET_ANYWHERE"],
      env,
    );
    expect(unset.code).not.toBe(0);
    expect(unset.stderr).toContain(
      "--auth-token env:NOT_SET_ANYWHERE: the environment variable NOT_SET_ANYWHERE is not set",
    );
  }, 90_000);

  it("takes auth from --from-file, with a flag overriding one of its fields", async () => {
    const file = path.join(dir, "endpoint.json");
    fs.writeFileSync(
      file,
      JSON.stringify({
        name: "from file",
        url: "https://hooks.example.com/basic",
        events: ["ROOM_CREATED"],
        auth: { type: "basic", username: "file-user", password: "file-password-5678" },
      }),
    );
    const created = await parley(
      ["webhooks", "create", "--from-file", file, "--auth-username", "flag-user", "--json"],
      env,
    );
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout).auth).toEqual({
      type: "basic",
      username: "flag-user",
      password: "****5678",
    });
  }, 90_000);
});
