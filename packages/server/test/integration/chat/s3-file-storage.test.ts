import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../../src/app-context.js";
import { buildApp, type ParleyApp } from "../../../src/app.js";
import { FileMissingError } from "../../../src/chat/file-storage/file-storage.js";
import { loadConfig } from "../../../src/config/load-config.js";
import { openDatabase } from "../../../src/db/open-database.js";
import {
  createTestApp,
  TEST_MASTER_KEY,
  type TestApp,
  type TestUser,
} from "../../helpers/build-app.js";
import {
  describeEachDialect,
  describeEachOf,
  POSTGRES,
  type TestDatabase,
} from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";
import { startS3, type TestS3 } from "../../helpers/s3-server.js";
import { joinRoom } from "./chat-helpers.js";
import { fileField, upload } from "./file-helpers.js";

const sha256 = (bytes: Buffer | string) => crypto.createHash("sha256").update(bytes).digest("hex");

async function storageKeyOf(ctx: AppContext, fileId: number): Promise<string> {
  const row = await ctx.db
    .selectFrom("files")
    .select("storage_key")
    .where("id", "=", fileId)
    .executeTakeFirstOrThrow();
  return row.storage_key;
}

describeEachDialect("uploads in an S3-compatible bucket on $name", (dialect) => {
  let s3: TestS3;
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let roomId: number;
  beforeAll(async () => {
    s3 = await startS3();
    t = await createTestApp(dialect, s3.settings);
    alice = await t.user("user", "alice");
    bob = await t.user("user", "bob");
    roomId = (await createRoom(t, alice, "bucket")).id;
    await joinRoom(t, bob, roomId);
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  it("stores an upload as an object of the bucket, nothing left in the data directory, and serves it back whole", async () => {
    // 3 MiB of varied bytes: several chunks each way.
    const bytes = crypto.randomBytes(3 * 1024 * 1024);
    const res = await upload(t, alice, roomId, [
      fileField(bytes, "data.bin", "application/octet-stream"),
    ]);
    expect(res.statusCode).toBe(201);
    const file = res.json<{ id: number; sha256: string }>();
    expect(file.sha256).toBe(sha256(bytes));
    const key = await storageKeyOf(t.ctx, file.id);
    expect(await s3.objects()).toContain(key);
    const local = path.join(t.dataDir, "files");
    expect(fs.existsSync(local) ? fs.readdirSync(local) : []).toEqual([]);

    const post = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: alice.headers,
      payload: { content: "the data", fileIds: [file.id] },
    });
    expect(post.statusCode).toBe(201);
    const got = await t.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/files/${file.id}`,
      headers: bob.headers,
    });
    expect(got.statusCode).toBe(200);
    expect(got.headers["content-length"]).toBe(String(bytes.length));
    expect(sha256(got.rawPayload)).toBe(sha256(bytes));
  });

  it("deletes the object with its message", async () => {
    const res = await upload(t, alice, roomId, [fileField("short-lived")]);
    const fileId = res.json<{ id: number }>().id;
    const key = await storageKeyOf(t.ctx, fileId);
    const post = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: alice.headers,
      payload: { content: "soon gone", fileIds: [fileId] },
    });
    expect(await s3.objects()).toContain(key);
    const deleted = await t.app.inject({
      method: "DELETE",
      url: `/api/rooms/${roomId}/messages/${post.json<{ id: number }>().id}`,
      headers: alice.headers,
    });
    expect(deleted.statusCode).toBe(204);
    expect(await s3.objects()).not.toContain(key);
    await expect(t.ctx.files.open(key)).rejects.toBeInstanceOf(FileMissingError);
  });

  it("keeps no object of an upload whose row was not committed", async () => {
    const before = await s3.objects();
    // The room is deleted while the bytes arrive: the row's transaction refuses, the object goes.
    const doomed = (await createRoom(t, alice, "doomed")).id;
    const original = t.ctx.files.store.bind(t.ctx.files);
    t.ctx.files.store = async (key, localPath, size) => {
      await original(key, localPath, size);
      await t.ctx.db
        .updateTable("rooms")
        .set({ deleted_at: Date.now() })
        .where("id", "=", doomed)
        .execute();
    };
    try {
      const res = await upload(t, alice, doomed, [fileField("never recorded")]);
      expect(res.statusCode).toBe(404);
    } finally {
      t.ctx.files.store = original;
    }
    expect(await s3.objects()).toEqual(before);
  });
});

/** An app on an already migrated database, with its own data directory (its own disk). */
async function instance(
  databaseUrl: string,
  settings: Record<string, unknown>,
): Promise<{ app: ParleyApp; ctx: AppContext; close(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-test-"));
  const config = loadConfig(
    {},
    { dataDir, logLevel: "silent", masterKey: TEST_MASTER_KEY, ...settings },
  );
  const connection = openDatabase({ databaseUrl, poolSize: 3 });
  const ctx = await createAppContext(config, { database: connection });
  const app = await buildApp(ctx, { logger: false });
  await app.ready();
  return {
    app,
    ctx,
    async close() {
      await app.close();
      await connection.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describeEachOf([POSTGRES])("two processes sharing $name and a bucket", () => {
  let s3: TestS3;
  let database: TestDatabase;
  let one: Awaited<ReturnType<typeof instance>>;
  let two: Awaited<ReturnType<typeof instance>>;
  beforeAll(async () => {
    s3 = await startS3();
    database = await POSTGRES.open();
    one = await instance(database.env.DATABASE_URL!, s3.settings);
    two = await instance(database.env.DATABASE_URL!, s3.settings);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await database?.cleanup();
    await s3?.close();
  });

  async function person(ctx: AppContext, username: string) {
    const now = Date.now();
    const row = await ctx.db
      .insertInto("users")
      .values({
        username,
        display_name: username,
        role: "user",
        status: "active",
        created_at: now,
        updated_at: now,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const { token } = await ctx.tokens.issue({ userId: row.id, role: "user", ttlSeconds: 600 });
    return { authorization: `Bearer ${token}` };
  }

  it("serves through one process a file uploaded and posted through the other", async () => {
    const alice = await person(one.ctx, "alice");
    const bob = await person(one.ctx, "bob");
    const room = await one.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: alice,
      payload: { name: "shared" },
    });
    const roomId = room.json<{ id: number }>().id;
    expect(
      (await two.app.inject({ method: "POST", url: `/api/rooms/${roomId}/join`, headers: bob }))
        .statusCode,
    ).toBe(200);

    const bytes = crypto.randomBytes(256 * 1024);
    const uploaded = await upload(
      { app: one.app } as TestApp,
      { headers: alice } as TestUser,
      roomId,
      [fileField(bytes, "shared.bin", "application/octet-stream")],
    );
    expect(uploaded.statusCode).toBe(201);
    const fileId = uploaded.json<{ id: number }>().id;
    const posted = await one.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: alice,
      payload: { content: "have a look", fileIds: [fileId] },
    });
    expect(posted.statusCode).toBe(201);

    const served = await two.app.inject({
      method: "GET",
      url: `/api/rooms/${roomId}/files/${fileId}`,
      headers: bob,
    });
    expect(served.statusCode).toBe(200);
    expect(sha256(served.rawPayload)).toBe(sha256(bytes));
    expect(served.headers["content-disposition"]).toMatch(/^attachment; filename="shared.bin"/);
  });
});
