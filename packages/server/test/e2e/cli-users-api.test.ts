import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { runCli as parley } from "../helpers/run-cli.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

describe("parley users and parley tokens, over the API", () => {
  let c: ClientApp;
  let env: Record<string, string>;
  beforeAll(async () => {
    c = await startClientApp(SQLITE);
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
  });
  afterAll(async () => {
    await c?.close();
  });

  const SPAWNS = 90_000;

  /** The status GET /api/me answers a bearer token. */
  async function meStatus(token: string): Promise<number> {
    const res = await fetch(`${c.baseUrl}/api/me`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return res.status;
  }

  it(
    "creates, lists, changes the role of, disables, enables and resets a user",
    async () => {
      const created = await parley(
        ["users", "create", "bob", "--role", "bot", "--display-name", "Build Bob"],
        env,
      );
      expect(created.stderr).toBe("");
      expect(created.code).toBe(0);
      const id = Number(
        /^Created user (\d+) bob \("Build Bob"\), role bot\.$/m.exec(created.stdout)?.[1],
      );
      expect(id).toBeGreaterThan(0);

      const list = await parley(["users", "list"], env);
      expect(list.stdout).toMatch(/^ID\s+USERNAME\s+NAME\s+ROLE\s+STATUS\s+CREATED$/m);
      expect(list.stdout).toMatch(
        new RegExp(`^${id}\\s+bob\\s+Build Bob\\s+bot\\s+active\\s`, "m"),
      );
      const json = JSON.parse((await parley(["users", "list", "--json"], env)).stdout) as Array<{
        username: string;
      }>;
      expect(json.map((u) => u.username)).toEqual(expect.arrayContaining(["admin", "bob"]));

      const role = await parley(["users", "role", "bob", "USER"], env);
      expect(role.stdout).toBe(
        "bob is now user; tokens issued with another role stopped working.\n",
      );
      const { data: token } = await c.admin("POST /api/admin/users/{id}/tokens", { id });
      expect(await meStatus(token.token)).toBe(200);

      const disabled = await parley(["users", "disable", String(id)], env);
      expect(disabled.stdout).toBe("Disabled bob: their sessions and tokens stopped working.\n");
      expect(await meStatus(token.token)).toBe(401);
      const enabled = await parley(["users", "enable", "bob", "--json"], env);
      expect(JSON.parse(enabled.stdout)).toMatchObject({ id, status: "active", role: "user" });

      const reset = await parley(["users", "reset-sign-in", "bob"], env);
      expect(reset.code).toBe(0);
      expect(reset.stdout).toMatch(/^http:\/\/\S+#\S+=[A-Za-z0-9_-]{43}\n$/);
      expect(reset.stderr).toMatch(
        /^parley: bob sets a new password there; single use, until \S+Z\n$/,
      );

      const nobody = await parley(["users", "disable", "nobody"], env);
      expect(nobody.code).toBe(3);
      expect(nobody.stderr).toBe('parley: no user "nobody"\n');
      const badRole = await parley(["users", "role", "bob", "owner"], env);
      expect(badRole.code).toBe(2);
      expect(badRole.stderr).toBe('parley: role must be one of admin, bot, user; got "owner"\n');
      const taken = await parley(["users", "create", "bob", "--json"], env);
      expect(taken.code).toBe(4);
      expect(JSON.parse(taken.stdout).error).toEqual({
        code: "username_taken",
        message: 'username_taken: the username "bob" is taken',
      });
    },
    SPAWNS,
  );

  it(
    "invites through the API when PARLEY_TOKEN is set",
    async () => {
      const run = await parley(["users", "invite", "--role", "bot", "--display-name", "CI"], env);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`parley: using the API at ${c.baseUrl}\n`);
      const url = run.stdout.trim();
      expect(url).toMatch(/#invite=[A-Za-z0-9_-]{43}$/);
      const res = await fetch(`${c.baseUrl}/api/auth/accept-invite`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          token: url.split("#invite=")[1],
          username: "ci-bot",
          password: "a long password",
        }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { user: { role: string } }).user.role).toBe("bot");
    },
    SPAWNS,
  );

  it(
    "lists tokens by user and prefix, and revokes one",
    async () => {
      const { data: carol } = await c.admin("POST /api/admin/users", {
        username: "carol",
        role: "user",
      });
      const { data: first } = await c.admin("POST /api/admin/users/{id}/tokens", { id: carol.id });
      const { data: second } = await c.admin("POST /api/admin/users/{id}/tokens", { id: carol.id });

      const list = await parley(["tokens", "list", "--user", "carol"], env);
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(/^TOKEN ID\s+USER\s+ROLE\s+ISSUED\s+EXPIRES$/m);
      expect(list.stdout).toContain(first.tokenId);
      expect(list.stdout).toContain(second.tokenId);
      expect(list.stdout).not.toContain(first.token);
      const byPrefix = JSON.parse(
        (await parley(["tokens", "list", "--prefix", first.tokenId.slice(0, 12), "--json"], env))
          .stdout,
      ) as Array<{ tokenId: string; username: string }>;
      expect(byPrefix.map((t) => t.tokenId)).toContain(first.tokenId);

      const revoked = await parley(["tokens", "revoke", first.tokenId], env);
      expect(revoked.stdout).toBe(`Revoked token ${first.tokenId}.\n`);
      expect(await meStatus(first.token)).toBe(401);
      expect(await meStatus(second.token)).toBe(200);
      const after = await parley(["tokens", "list", "--user", String(carol.id), "--json"], env);
      expect(
        (JSON.parse(after.stdout) as Array<{ tokenId: string }>).map((t) => t.tokenId),
      ).toEqual([second.tokenId]);

      const bad = await parley(["tokens", "revoke", "not a token id"], env);
      expect(bad.code).toBe(2);
      const noOne = await parley(["tokens", "list", "--user", "nobody"], env);
      expect(noOne.code).toBe(3);
    },
    SPAWNS,
  );
});
