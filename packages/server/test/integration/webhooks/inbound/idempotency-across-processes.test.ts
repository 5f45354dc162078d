import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { InboundWebhookWithToken } from "@parley/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createAppContext } from "../../../../src/app-context.js";
import { buildApp, type ParleyApp } from "../../../../src/app.js";
import { openDatabase, type DatabaseConnection } from "../../../../src/db/open-database.js";
import { createTestApp, type TestApp } from "../../../helpers/build-app.js";
import {
  describeEachDialect,
  type TestDatabase,
  type TestDialect,
} from "../../../helpers/dialects.js";
import { createWebhook, ingestPath, messagesOf } from "./inbound-helpers.js";

/**
 * Two apps on one database, as two `parley serve` processes are (each its own connection, batches
 * and requests in flight): a key sent to both posts once, and each answers the first answer.
 */
describeEachDialect("Idempotency-Key across processes on $name", (dialect) => {
  let shared: TestDatabase;
  let sqliteDir: string | undefined;
  let first: TestApp;
  let second: { app: ParleyApp };
  let secondConnection: DatabaseConnection;
  let hook: InboundWebhookWithToken;

  const connect = () =>
    dialect.name === "sqlite"
      ? openDatabase({ sqlitePath: path.join(sqliteDir!, "parley.db") })
      : openDatabase({ databaseUrl: shared.env.DATABASE_URL!, poolSize: 3 });
  const sameDatabase = (): TestDialect => ({
    name: dialect.name,
    async open() {
      const database = connect();
      return { database, env: shared.env, cleanup: () => database.close() };
    },
  });

  beforeAll(async () => {
    if (dialect.name === "sqlite") {
      sqliteDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-idempotency-"));
      shared = await dialect.open({ sqlitePath: path.join(sqliteDir, "parley.db") });
    } else {
      shared = await dialect.open();
    }
    first = await createTestApp(sameDatabase(), { rateLimitWebhookIngest: "100000/1m" });
    secondConnection = connect();
    const ctx = await createAppContext(first.ctx.config, { database: secondConnection });
    second = { app: await buildApp(ctx, { logger: false }) };
    await second.app.ready();
    hook = await createWebhook(first);
  });
  afterAll(async () => {
    await first?.close();
    await second?.app.close();
    await secondConnection?.close();
    await shared?.cleanup();
    if (sqliteDir) fs.rmSync(sqliteDir, { recursive: true, force: true });
  });

  const post = (app: ParleyApp, key: string, content: string) =>
    app.inject({
      method: "POST",
      url: ingestPath(hook.token),
      headers: { "content-type": "application/json", "idempotency-key": key },
      payload: JSON.stringify({ content }),
    });

  it("posts one message for a key sent 10 times to each process at once", async () => {
    const before = (await messagesOf(first, hook.roomId)).length;
    const key = `across-${Date.now()}`;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(i % 2 ? second.app : first.app, key, "once")),
    );
    expect((await messagesOf(first, hook.roomId)).length).toBe(before + 1);
    const posted = answers.filter(
      (r) => r.statusCode === 200 && r.headers["idempotent-replayed"] === undefined,
    );
    expect(posted).toHaveLength(1);
    for (const res of answers) {
      if (res.statusCode === 200) expect(res.json()).toEqual(posted[0]!.json());
      else expect(res.json()).toMatchObject({ code: "idempotency_key_in_use" });
    }
    // Once both ended, each process answers the first answer.
    for (const app of [first.app, second.app]) {
      const again = await post(app, key, "once");
      expect(again.headers["idempotent-replayed"]).toBe("true");
      expect(again.json()).toEqual(posted[0]!.json());
    }
  });

  it("posts once per key when many keys, each sent to both processes, arrive together", async () => {
    const before = (await messagesOf(first, hook.roomId)).length;
    const run = Date.now();
    // The content names the key in letters (digits could look like a card number to DLP).
    const keys = Array.from({ length: 15 }, (_, i) => `key ${String.fromCharCode(97 + i)}`);
    const answers = await Promise.all(
      keys.flatMap((key) => [
        post(first.app, `${run} ${key}`, key),
        post(second.app, `${run} ${key}`, key),
      ]),
    );
    const messages = (await messagesOf(first, hook.roomId)).slice(before);
    expect(messages.map((m) => m.content).sort()).toEqual([...keys].sort());
    // Every 200 for a key names that key's one message.
    keys.forEach((key, k) => {
      const message = messages.find((m) => m.content === key)!;
      for (const res of answers.slice(2 * k, 2 * k + 2)) {
        if (res.statusCode === 200) expect(res.json().messageId).toBe(Number(message.id));
        else expect(res.json()).toMatchObject({ code: "idempotency_key_in_use" });
      }
    });
  });

  it("answers a GitHub redelivery to the other process with the first answer", async () => {
    const before = (await messagesOf(first, hook.roomId)).length;
    const delivery = `delivery-${Date.now()}`;
    const deliver = (app: ParleyApp) =>
      app.inject({
        method: "POST",
        url: `${ingestPath(hook.token)}/github`,
        headers: {
          "content-type": "application/json",
          "x-github-event": "star",
          "x-github-delivery": delivery,
        },
        payload: JSON.stringify({
          action: "created",
          repository: { full_name: "octo/repo", html_url: "https://github.com/octo/repo" },
          sender: { login: "octocat", html_url: "https://github.com/octocat" },
        }),
      });
    const a = await deliver(first.app);
    const b = await deliver(second.app);
    expect(a.statusCode).toBe(200);
    expect(b.headers["idempotent-replayed"]).toBe("true");
    expect(b.body).toBe(a.body);
    expect((await messagesOf(first, hook.roomId)).length).toBe(before + 1);
  });
});
