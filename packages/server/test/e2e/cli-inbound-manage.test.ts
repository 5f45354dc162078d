import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SQLITE } from "../helpers/dialects.js";
import { runCli as parley } from "../helpers/run-cli.js";
import { startClientApp, type ClientApp } from "../integration/client/client-app.js";

describe("parley inbound rotate-token|disable|enable|delete", () => {
  let c: ClientApp;
  let env: Record<string, string>;
  beforeAll(async () => {
    c = await startClientApp(SQLITE);
    env = { PARLEY_URL: c.baseUrl, PARLEY_TOKEN: c.t.admin.token };
  });
  afterAll(async () => {
    await c?.close();
  });

  /** Posts through an ingest URL printed for another host: its path, on this server. */
  async function post(url: string): Promise<number> {
    const res = await fetch(`${c.baseUrl}${new URL(url).pathname}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "through the CLI's URL" }),
    });
    return res.status;
  }

  it("rotates the token (new URLs printed once, the old refused), disables, enables and deletes", async () => {
    const { data: room } = await c.admin("POST /api/rooms", { name: "inbound-managed" });
    const { data: hook } = await c.admin("POST /api/admin/inbound-webhooks", {
      roomId: room.id,
      displayName: "Deploys",
    });
    expect(await post(hook.url)).toBe(200);
    const id = String(hook.id);

    const rotated = await parley(["inbound", "rotate-token", id], env);
    expect(rotated.stderr).toBe("");
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toContain(
      `Rotated the token of inbound webhook ${id} "Deploys": the old URLs stopped working.`,
    );
    const url = /^ {2}url: +(\S+)$/m.exec(rotated.stdout)![1]!;
    expect(url).not.toBe(hook.url);
    expect(rotated.stdout).toMatch(/^ {2}Slack url: +\S+\/slack$/m);
    expect(await post(hook.url)).toBe(404);
    expect(await post(url)).toBe(200);

    const disabled = await parley(["inbound", "disable", id], env);
    expect(disabled.code).toBe(0);
    expect(disabled.stdout).toBe(
      `Disabled inbound webhook ${id} "Deploys": its URLs are refused until it is enabled.\n`,
    );
    expect(await post(url)).toBe(404);
    const enabled = await parley(["inbound", "enable", id, "--json"], env);
    expect(JSON.parse(enabled.stdout)).toMatchObject({ id: hook.id, enabled: true });
    expect(await post(url)).toBe(200);

    const deleted = await parley(["inbound", "delete", id], env);
    expect(deleted.stdout).toBe(`Deleted inbound webhook ${id}; its URLs no longer work.\n`);
    expect(await post(url)).toBe(404);
    const again = await parley(["inbound", "delete", id, "--json"], env);
    expect(again.code).toBe(3);
    expect(JSON.parse(again.stdout).error.code).toBe("not_found");
    const bad = await parley(["inbound", "disable", "x1"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('parley: inbound webhook id must be a positive integer, got "x1"\n');
  }, 90_000);
});
