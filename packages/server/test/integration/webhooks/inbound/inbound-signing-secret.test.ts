import { afterAll, beforeAll, expect, it } from "vitest";
import { openSecret } from "../../../../src/config/secret-box.js";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import { describeEachDialect } from "../../../helpers/dialects.js";
import { createRoom } from "../../../helpers/fixtures.js";

const BASE = "/api/admin/inbound-webhooks";
const SECRET = "gh-secret-Ut9x4kQm2Lp7Zr8V";

describeEachDialect("inbound webhook signing secret on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  const admin = (method: "GET" | "POST" | "PATCH", url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: t.admin.headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const storedCiphertext = async (id: number) =>
    (
      await t.ctx.db
        .selectFrom("inbound_webhooks")
        .select("signing_secret_ciphertext")
        .where("id", "=", id)
        .executeTakeFirstOrThrow()
    ).signing_secret_ciphertext;

  it("sets it on create, shows only signingSecretSet, and stores it encrypted with the server's key", async () => {
    const roomId = (await createRoom(t)).id;
    const res = await admin("POST", BASE, { roomId, displayName: "GitHub", signingSecret: SECRET });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created.signingSecretSet).toBe(true);
    expect(res.body).not.toContain(SECRET);
    expect(created).not.toHaveProperty("signingSecret");

    const sealed = await storedCiphertext(created.id);
    expect(sealed).not.toBeNull();
    expect(sealed).not.toContain(SECRET);
    expect(openSecret(t.ctx.keys.secretKey, sealed!)).toBe(SECRET);

    for (const url of [BASE, `${BASE}/${created.id}`]) {
      const read = await admin("GET", url);
      expect(read.body).not.toContain(SECRET);
      expect(read.body).toContain('"signingSecretSet":true');
    }
    const rotated = await admin("POST", `${BASE}/${created.id}/rotate-token`);
    expect(rotated.json().signingSecretSet).toBe(true);
    expect(rotated.body).not.toContain(SECRET);
  });

  it("is unset by default, set or replaced by PATCH, and removed by null", async () => {
    const roomId = (await createRoom(t)).id;
    const created = (await admin("POST", BASE, { roomId, displayName: "Stripe" })).json();
    expect(created.signingSecretSet).toBe(false);
    expect(await storedCiphertext(created.id)).toBeNull();

    const set = await admin("PATCH", `${BASE}/${created.id}`, { signingSecret: SECRET });
    expect(set.statusCode).toBe(200);
    expect(set.json().signingSecretSet).toBe(true);
    expect(set.body).not.toContain(SECRET);

    const other = `${SECRET}-2`;
    await admin("PATCH", `${BASE}/${created.id}`, { signingSecret: other });
    expect(openSecret(t.ctx.keys.secretKey, (await storedCiphertext(created.id))!)).toBe(other);

    // A PATCH that does not name it keeps it.
    const renamed = await admin("PATCH", `${BASE}/${created.id}`, { displayName: "Stripe 2" });
    expect(renamed.json().signingSecretSet).toBe(true);

    const removed = await admin("PATCH", `${BASE}/${created.id}`, { signingSecret: null });
    expect(removed.json().signingSecretSet).toBe(false);
    expect(await storedCiphertext(created.id)).toBeNull();
  });

  it.each([
    ["15 characters", "x".repeat(15)],
    ["1025 characters", "x".repeat(1025)],
  ])(
    "refuses a secret of %s with 400 invalid_secret, on create and on PATCH",
    async (_w, secret) => {
      const roomId = (await createRoom(t)).id;
      const create = await admin("POST", BASE, { roomId, displayName: "X", signingSecret: secret });
      expect(create.statusCode).toBe(400);
      expect(create.json()).toMatchObject({ code: "invalid_secret", field: "body.signingSecret" });
      expect(create.body).not.toContain(secret);
      const id = (await admin("POST", BASE, { roomId, displayName: "X" })).json().id;
      const patch = await admin("PATCH", `${BASE}/${id}`, { signingSecret: secret });
      expect(patch.statusCode).toBe(400);
      expect(patch.json()).toMatchObject({ code: "invalid_secret" });
    },
  );

  it("accepts 16 and 1024 characters", async () => {
    const roomId = (await createRoom(t)).id;
    for (const secret of ["s".repeat(16), "s".repeat(1024)]) {
      const res = await admin("POST", BASE, { roomId, displayName: "X", signingSecret: secret });
      expect(res.statusCode).toBe(201);
      expect(res.json().signingSecretSet).toBe(true);
    }
  });
});
