import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { SQLITE, type TestDialect } from "../../helpers/dialects.js";
import { createRoom } from "../../helpers/fixtures.js";

/**
 * A deleted message leaves nothing readable in the SQLite database's files once the delete has
 * answered: not the content (short, in the row's cell; long, in overflow pages), not its earlier
 * revisions, not its text or its words in the search index, neither in the database file nor in
 * its write-ahead log.
 */
let t: TestApp;
let alice: TestUser;
let roomId: number;
let file: string;

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "parley-erase-"));
  file = path.join(dir, "parley.db");
  const onFile: TestDialect = { name: "sqlite", open: () => SQLITE.open({ sqlitePath: file }) };
  t = await createTestApp(onFile);
  alice = await t.user("user", "alice");
  roomId = (await createRoom(t, alice, "erasure")).id;
});
afterAll(async () => {
  await t.close();
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
});

function marker(name: string): string {
  return `${name}-${crypto.randomBytes(8).toString("hex")}`;
}

/** Every file of the database: the file itself and its write-ahead log, as bytes. */
function databaseBytes(): Buffer {
  return Buffer.concat(
    [file, `${file}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)),
  );
}

/** The marker's random part: one word, as the search index keeps it. */
function randomWord(secret: string): string {
  return secret.split("-").at(-1)!;
}

/** Whether a search by the marker's random word finds a message. */
async function found(secret: string): Promise<boolean> {
  const res = await t.app.inject({
    method: "GET",
    url: `/api/search?q=${randomWord(secret)}`,
    headers: alice.headers,
  });
  expect(res.statusCode).toBe(200);
  return res.json().items.length > 0;
}

async function postAs(content: string): Promise<number> {
  const res = await t.app.inject({
    method: "POST",
    url: `/api/rooms/${roomId}/messages`,
    headers: alice.headers,
    payload: { content },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id;
}

it("erases the content and revisions of a deleted message from the database file and its log", async () => {
  const short = marker("short-secret");
  const long = marker("long-secret");
  const draft = marker("draft-secret");
  const shortId = await postAs(short);
  // Larger than a page: SQLite keeps it in overflow pages.
  const longId = await postAs(`${long} ${"lorem ipsum ".repeat(800)}${long}`);
  const edited = await t.app.inject({
    method: "PATCH",
    url: `/api/rooms/${roomId}/messages/${shortId}`,
    headers: alice.headers,
    payload: { content: `${draft} then ${short}` },
  });
  expect(edited.statusCode).toBe(200);
  // Some of it in the database file, the rest in the log, as a running server would have it.
  await sql`PRAGMA wal_checkpoint(PASSIVE)`.execute(t.ctx.db);
  await postAs("a later message, still in the log");
  const before = databaseBytes();
  for (const secret of [short, long, draft]) expect(before.includes(secret)).toBe(true);
  // The search index holds the words of what is current (the draft's went with the edit).
  for (const secret of [short, long]) expect(await found(secret)).toBe(true);

  for (const id of [shortId, longId]) {
    const res = await t.app.inject({
      method: "DELETE",
      url: `/api/rooms/${roomId}/messages/${id}`,
      headers: alice.headers,
    });
    expect(res.statusCode).toBe(204);
  }

  const after = databaseBytes();
  for (const secret of [short, long, draft]) {
    expect(after.includes(secret), secret).toBe(false);
    // The index keeps words, not the text, each sharing its first letters with the word before
    // it: the end of the marker's random word is what would be left of it there.
    expect(after.includes(randomWord(secret).slice(-12)), secret).toBe(false);
    expect(await found(secret)).toBe(false);
  }
});
