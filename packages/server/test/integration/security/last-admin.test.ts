/**
 * The last enabled admin stays: it cannot be deleted or disabled (409 last_admin), by itself or by
 * another admin, and two admins removing each other at the same moment leave one of them. Without
 * an admin, only `parley token create` on the server gets one back.
 */
import { afterEach, expect, it } from "vitest";
import type { Principal } from "../../../src/auth/principal.js";
import { deleteUser, disableUser } from "../../../src/chat/users-service.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";

describeEachDialect("the last enabled admin on $name", (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const remove = (app: TestApp, by: TestUser, target: TestUser, how: "delete" | "disable") =>
    app.app.inject(
      how === "delete"
        ? { method: "DELETE", url: `/api/admin/users/${target.id}`, headers: by.headers }
        : { method: "POST", url: `/api/admin/users/${target.id}/disable`, headers: by.headers },
    );

  async function enabledAdmins(app: TestApp): Promise<number> {
    const rows = await app.ctx.db
      .selectFrom("users")
      .select("id")
      .where("role", "=", "admin")
      .where("status", "=", "active")
      .execute();
    return rows.length;
  }

  it.each(["delete", "disable"] as const)(
    "refuses to %s the only admin, even at its own request",
    async (how) => {
      const app = (t = await createTestApp(dialect));
      const res = await remove(app, app.admin, app.admin, how);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ status: 409, code: "last_admin" });
      expect(await enabledAdmins(app)).toBe(1);
      // Still an admin, still able to act.
      const me = await app.app.inject({ url: "/api/admin/users", headers: app.admin.headers });
      expect(me.statusCode).toBe(200);
    },
  );

  it("lets an admin go while another stays, and counts a disabled admin as none", async () => {
    const app = (t = await createTestApp(dialect));
    const second = await app.user("admin", "second");
    const third = await app.user("admin", "third");
    expect((await remove(app, app.admin, third, "disable")).statusCode).toBe(200);
    expect((await remove(app, second, app.admin, "delete")).statusCode).toBe(204);
    // `third` is disabled: `second` is the last enabled admin.
    const last = await remove(app, second, second, "delete");
    expect(last.statusCode).toBe(409);
    expect(last.json().code).toBe("last_admin");
    // Users and bots go as before.
    const user = await app.user("user", "someone");
    expect((await remove(app, second, user, "delete")).statusCode).toBe(204);
  });

  it("leaves one admin when the last two remove each other at the same moment", async () => {
    const app = (t = await createTestApp(dialect));
    const principal = (user: TestUser): Principal => ({
      userId: user.id,
      username: user.username,
      role: "admin",
    });
    let survivor = app.admin;
    for (let round = 0; round < 12; round++) {
      const other = await app.user("admin", `admin-${round}`);
      // The services, not the routes: both requests past authentication before either commits.
      const outcomes = await Promise.allSettled([
        round % 2 === 0
          ? deleteUser(app.ctx, principal(survivor), other.id)
          : disableUser(app.ctx, principal(survivor), other.id),
        deleteUser(app.ctx, principal(other), survivor.id),
      ]);
      const refused = outcomes.filter((outcome) => outcome.status === "rejected");
      expect(refused, `round ${round}`).toHaveLength(1);
      expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({ code: "last_admin" });
      expect(await enabledAdmins(app), `round ${round}`).toBe(1);
      if (outcomes[1]!.status === "fulfilled") survivor = other;
    }
  });
});
