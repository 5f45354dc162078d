/**
 * Uploads across two `parley serve` processes on one PostgreSQL database, configured as an
 * operator does (PARLEY_FILES_S3_* in the environment), each with a data directory of its own
 * (hosts that share no disk): a file uploaded and posted through one is served by the other from
 * the bucket (s3rver on loopback), and deleting its message through the other removes the object.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POSTGRES, type TestDatabase } from "../helpers/dialects.js";
import { FAST_ENV } from "../helpers/knobs.js";
import { startS3, type TestS3 } from "../helpers/s3-server.js";
import { killAllServers, spawnServer, type SpawnedServer } from "../helpers/spawn-server.js";

describe("uploads across two processes on PostgreSQL with a bucket", { tags: ["postgres"] }, () => {
  let database: TestDatabase;
  let s3: TestS3;
  let a: SpawnedServer;
  let b: SpawnedServer;
  const dirs: string[] = [];

  async function api<T>(
    server: SpawnedServer,
    token: string,
    method: string,
    url: string,
    body?: unknown,
  ): Promise<T> {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined || body instanceof FormData
          ? {}
          : { "content-type": "application/json" }),
      },
      ...(body === undefined
        ? {}
        : { body: body instanceof FormData ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async function createUser(username: string): Promise<string> {
    const user = await api<{ id: number }>(a, a.adminToken!, "POST", "/api/admin/users", {
      username,
      role: "user",
    });
    return (
      await api<{ token: string }>(a, a.adminToken!, "POST", `/api/admin/users/${user.id}/tokens`)
    ).token;
  }

  beforeAll(async () => {
    database = await POSTGRES.open();
    await database.database.close();
    s3 = await startS3();
    const env = (name: string) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-files-${name}-`));
      dirs.push(dir);
      return {
        ...FAST_ENV,
        PARLEY_DATA_DIR: dir,
        PARLEY_FILES_S3_BUCKET: s3.bucket,
        PARLEY_FILES_S3_ENDPOINT: s3.endpoint,
        PARLEY_FILES_S3_ACCESS_KEY_ID: "S3RVER",
        PARLEY_FILES_S3_SECRET_ACCESS_KEY: "S3RVER",
        PARLEY_FILES_S3_FORCE_PATH_STYLE: "true",
        ...database.env,
      };
    };
    a = await spawnServer({ env: env("a") });
    b = await spawnServer({ env: env("b") });
  }, 60_000);
  afterAll(async () => {
    await killAllServers();
    await database?.cleanup();
    await s3?.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("serves through one process a file uploaded and posted through the other, and deletes it through either", async () => {
    const alice = await createUser("alice");
    const bob = await createUser("bob");
    const roomId = (await api<{ id: number }>(a, alice, "POST", "/api/rooms", { name: "shared" }))
      .id;
    await api(b, bob, "POST", `/api/rooms/${roomId}/join`);

    const bytes = crypto.randomBytes(1024 * 1024);
    const form = new FormData();
    form.set("file", new Blob([bytes], { type: "image/webp" }), "photo.webp");
    const file = await api<{ id: number }>(a, alice, "POST", `/api/rooms/${roomId}/files`, form);
    const message = await api<{ id: number; files: unknown[] }>(
      a,
      alice,
      "POST",
      `/api/rooms/${roomId}/messages`,
      {
        content: "from a",
        fileIds: [file.id],
      },
    );
    expect(message.files).toEqual([
      { id: file.id, name: "photo.webp", size: bytes.length, mediaType: "image/webp" },
    ]);
    // Neither process keeps the bytes on its own disk.
    for (const dir of dirs) {
      const files = path.join(dir, "files");
      expect(fs.existsSync(files) ? fs.readdirSync(files) : []).toEqual([]);
    }

    const res = await fetch(`${b.url}/api/rooms/${roomId}/files/${file.id}`, {
      headers: { authorization: `Bearer ${bob}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/webp");
    expect(res.headers.get("content-disposition")).toMatch(/^inline; filename="photo.webp"/);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);

    expect(await s3.objects()).toHaveLength(1);
    await api(b, alice, "DELETE", `/api/rooms/${roomId}/messages/${message.id}`);
    expect(await s3.objects()).toEqual([]);
    const gone = await fetch(`${a.url}/api/rooms/${roomId}/files/${file.id}`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    expect(gone.status).toBe(404);
  });
});
