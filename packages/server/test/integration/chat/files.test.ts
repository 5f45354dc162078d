import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AntivirusUnavailableError } from "../../../src/safety/antivirus/antivirus-unavailable-error.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { EVENT_NAMES } from "../../../src/events/event-catalogue.js";
import { createRoom, insertEndpoint } from "../../helpers/fixtures.js";
import { countRows, failFanOutAfterWriting, recordEvents } from "./chat-helpers.js";
import { fileField, upload } from "./file-helpers.js";

const EICAR = "X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";
const LIMIT = 1024;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The files on disk are exactly the stored rows' files: nothing half-written, nothing orphaned. */
async function expectDiskMatchesRows(t: TestApp): Promise<void> {
  const dir = path.join(t.dataDir, "files");
  const onDisk = fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
  const rows = await t.ctx.db.selectFrom("files").select("storage_key").execute();
  expect(onDisk).toEqual(rows.map((row) => row.storage_key).sort());
}

describeEachDialect("file uploads on $name", (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let stranger: TestUser;
  let roomId: number;
  beforeAll(async () => {
    t = await createTestApp(dialect, { maxUploadBytes: LIMIT });
    alice = await t.user("user", "alice");
    stranger = await t.user("user", "stranger");
    roomId = (await createRoom(t, alice, "uploads")).id;
  });
  afterAll(async () => {
    await t.close();
  });

  it("stores a clean file under the data directory, answers 201 and fires FILE_UPLOADED once", async () => {
    const bytes = Buffer.from("quarterly numbers\n");
    const seen = recordEvents(t);
    const res = await upload(t, alice, roomId, [
      { name: "comment", data: "fyi" },
      fileField(bytes, "../../etc/report.txt"),
    ]);
    seen.stop();
    expect(res.statusCode).toBe(201);
    const file = res.json();
    expect(file).toEqual({
      id: expect.any(Number),
      roomId,
      fileName: "report.txt",
      fileSize: bytes.length,
      fileType: "text/plain",
      sha256: crypto.createHash("sha256").update(bytes).digest("hex"),
      uploadedBy: "alice",
      createdAt: expect.stringMatching(ISO),
    });
    expect(seen.events).toEqual([
      [
        "FILE_UPLOADED",
        {
          fileId: file.id,
          roomId,
          fileName: "report.txt",
          fileSize: bytes.length,
          fileType: "text/plain",
          uploadedBy: "alice",
        },
      ],
    ]);
    const row = await t.ctx.db
      .selectFrom("files")
      .select("storage_key")
      .where("id", "=", file.id)
      .executeTakeFirstOrThrow();
    expect(fs.readFileSync(path.join(t.dataDir, "files", row.storage_key))).toEqual(bytes);
    await expectDiskMatchesRows(t);
  });

  it("rejects the EICAR test file with 422 file_infected after committing FILE_INFECTION_DETECTED, storing nothing", async () => {
    const before = await countRows(t, "files");
    const seen = recordEvents(t);
    const res = await upload(t, alice, roomId, [
      fileField(EICAR, "eicar.com", "application/octet-stream"),
    ]);
    seen.stop();
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: "file_infected", signature: "EICAR-Test-File" });
    expect(seen.events).toEqual([
      [
        "FILE_INFECTION_DETECTED",
        {
          roomId,
          fileName: "eicar.com",
          fileSize: EICAR.length,
          fileType: "application/octet-stream",
          sha256: crypto.createHash("sha256").update(EICAR, "latin1").digest("hex"),
          signature: "EICAR-Test-File",
          scanner: "builtin",
          action: "rejected",
          uploadedBy: "alice",
          scannedAt: expect.stringMatching(ISO),
        },
      ],
    ]);
    expect(await countRows(t, "files")).toBe(before);
    await expectDiskMatchesRows(t);
  });

  it("accepts a file of exactly the limit and refuses one byte more with 413 file_too_large", async () => {
    const atLimit = await upload(t, alice, roomId, [fileField(Buffer.alloc(LIMIT, 0x61))]);
    expect(atLimit.statusCode).toBe(201);
    expect(atLimit.json().fileSize).toBe(LIMIT);
    const before = await countRows(t, "files");
    const seen = recordEvents(t);
    const over = await upload(t, alice, roomId, [fileField(Buffer.alloc(LIMIT + 1, 0x61))]);
    seen.stop();
    expect(over.statusCode).toBe(413);
    expect(over.json()).toMatchObject({ code: "file_too_large", limit: LIMIT });
    expect(seen.events).toEqual([]);
    expect(await countRows(t, "files")).toBe(before);
    await expectDiskMatchesRows(t);
  });

  it("answers 400 file_required without a part named file, or for a body that is not multipart", async () => {
    const fieldsOnly = await upload(t, alice, roomId, [{ name: "comment", data: "no file here" }]);
    expect(fieldsOnly.statusCode).toBe(400);
    expect(fieldsOnly.json().code).toBe("file_required");
    const wrongName = await upload(t, alice, roomId, [
      { name: "attachment", filename: "a.txt", type: "text/plain", data: "x" },
    ]);
    expect(wrongName.statusCode).toBe(400);
    expect(wrongName.json().code).toBe("file_required");
    const json = await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/files`,
      headers: alice.headers,
      payload: { file: "x" },
    });
    expect(json.statusCode).toBe(400);
    expect(json.json().code).toBe("file_required");
    await expectDiskMatchesRows(t);
  });

  it("answers 403 not_a_member, 404 for an unknown room, 400 for a non-integer id and 401 without a token", async () => {
    const notMember = await upload(t, stranger, roomId, [fileField("x")]);
    expect(notMember.statusCode).toBe(403);
    expect(notMember.json().code).toBe("not_a_member");
    const unknown = await upload(t, alice, 999999, [fileField("x")]);
    expect(unknown.statusCode).toBe(404);
    const bad = await upload(t, alice, "abc", [fileField("x")]);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: "validation_failed", field: "params.roomId" });
    const anonymous = await upload(t, undefined, roomId, [fileField("x")]);
    expect(anonymous.statusCode).toBe(401);
  });

  it("fails closed with 503 antivirus_unavailable when the scanner cannot decide", async () => {
    const scanner = t.ctx.safety.scanner;
    t.ctx.safety.scanner = {
      name: "clamav",
      async scan() {
        throw new AntivirusUnavailableError("clamav", "connection refused");
      },
    };
    const before = await countRows(t, "files");
    const seen = recordEvents(t);
    const res = await upload(t, alice, roomId, [fileField("harmless")]);
    seen.stop();
    t.ctx.safety.scanner = scanner;
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe("antivirus_unavailable");
    expect(seen.events).toEqual([]);
    expect(await countRows(t, "files")).toBe(before);
    await expectDiskMatchesRows(t);
  });

  it("removes the stored bytes when the transaction fails, leaving no row and no delivery", async () => {
    await insertEndpoint(t, { events: EVENT_NAMES });
    const files = await countRows(t, "files");
    const deliveries = await countRows(t, "webhook_deliveries");
    const restore = failFanOutAfterWriting(t);
    const res = await upload(t, alice, roomId, [fileField("doomed")]);
    restore();
    expect(res.statusCode).toBe(500);
    expect(await countRows(t, "files")).toBe(files);
    expect(await countRows(t, "webhook_deliveries")).toBe(deliveries);
    await expectDiskMatchesRows(t);
  });
});

describeEachDialect("file uploads in the community edition on $name", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { edition: "community" });
  });
  afterAll(async () => {
    await t.close();
  });

  it("stores files without scanning them", async () => {
    expect(t.ctx.safety.scanner).toBeNull();
    const alice = await t.user("user", "alice");
    const room = await createRoom(t, alice, "community");
    const seen = recordEvents(t);
    const res = await upload(t, alice, room.id, [
      fileField(EICAR, "eicar.com", "application/octet-stream"),
    ]);
    seen.stop();
    expect(res.statusCode).toBe(201);
    expect(seen.events.map(([event]) => event)).toEqual(["FILE_UPLOADED"]);
    await expectDiskMatchesRows(t);
  });
});
