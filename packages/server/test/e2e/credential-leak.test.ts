/**
 * Every credential an endpoint holds stays out of everything Parley writes or shows: a real
 * `parley serve` (logging at trace) delivers with each kind of credential through a proxy that
 * wants credentials, including failures (a 401 receiver, a refused token request); then its
 * output, its database (the SQLite file with its WAL, or every PostgreSQL table), /metrics and
 * every admin API answer the UI shows (endpoints, deliveries, attempt histories) are searched for
 * each credential, raw and in the forms it travels in (base64 of user:password, a PEM body line).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { describe, expect, it, onTestFinished } from "vitest";
import { openSecret } from "../../src/config/secret-box.js";
import { startConnectProxy } from "../helpers/connect-proxy.js";
import { POSTGRES } from "../helpers/dialects.js";
import { FAST_ENV } from "../helpers/knobs.js";
import { startTokenServer } from "../helpers/oauth2-token-server.js";
import { startReceiver } from "../helpers/receiver.js";
import { killAllServers, spawnServer } from "../helpers/spawn-server.js";
import { createTestPki, startMtlsReceiver } from "../helpers/test-pki.js";

const SECRET_KEY = randomBytes(32).toString("hex");

/** A credential with a recognisable, unique body. */
const credential = (name: string) => `${name}-${randomBytes(12).toString("hex")}`;

async function run(dialect: "sqlite" | "postgres") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-leak-"));
  const database = dialect === "postgres" ? await POSTGRES.open() : undefined;
  onTestFinished(async () => {
    await killAllServers();
    await database?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const proxyPassword = credential("proxy-password");
  const proxy = await startConnectProxy({ username: "egress", password: proxyPassword });
  const tokens = await startTokenServer();
  const pki = createTestPki();
  const mtls = await startMtlsReceiver(pki);
  const receiver = await startReceiver();
  // The first request of each endpoint is refused with 401 (the OAuth one fetches anew).
  const seen = new Set<string>();
  receiver.respondWith((request) => {
    const key = request.headers["user-agent"] + (request.headers["x-endpoint"] ?? "");
    if (seen.has(key)) return { status: 204 };
    seen.add(key);
    return { status: 401, headers: { "www-authenticate": "Bearer" } };
  });
  onTestFinished(async () => {
    await Promise.all([proxy.close(), tokens.close(), mtls.close(), receiver.close()]);
  });

  const server = await spawnServer({
    env: {
      ...FAST_ENV,
      PARLEY_DATA_DIR: dir,
      PARLEY_LOG_LEVEL: "trace",
      PARLEY_SECRET_KEY: SECRET_KEY,
      PARLEY_WEBHOOK_PROXY_URL: proxy.url,
      ...(database?.env ?? {}),
    },
  });
  const api = async (method: string, url: string, body?: object) => {
    const res = await fetch(`${server.url}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${server.adminToken!}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
    return text;
  };

  const secrets = {
    secret: credential("whsec-like-secret"),
    header: credential("custom-header-value"),
    password: credential("basic-password"),
    bearer: credential("bearer-token"),
    clientSecret: credential("client-secret"),
    wrongClientSecret: credential("wrong-client-secret"),
    passphrase: credential("key-passphrase"),
  };
  const client = pki.client("leak-test", { passphrase: secrets.passphrase });
  const create = async (name: string, fields: object) =>
    (
      JSON.parse(
        await api("POST", "/api/admin/webhooks", {
          name,
          secret: secrets.secret,
          events: ["ADMIN_USER_DISABLED"],
          ...fields,
        }),
      ) as { id: number }
    ).id;
  const ids = [
    await create("basic", {
      url: receiver.url,
      headers: { "X-Endpoint": `basic ${secrets.header}` },
      auth: { type: "basic", username: "parley", password: secrets.password },
    }),
    await create("bearer", {
      url: receiver.url,
      headers: { "X-Endpoint": "bearer" },
      auth: { type: "bearer", token: secrets.bearer },
    }),
    await create("oauth2", {
      url: receiver.url,
      headers: { "X-Endpoint": "oauth2" },
      auth: {
        type: "oauth2",
        tokenUrl: tokens.tokenUrl,
        clientId: "parley",
        clientSecret: secrets.clientSecret,
      },
    }),
    await create("mtls", {
      url: mtls.url,
      tls: {
        clientCertificatePem: client.cert,
        clientKeyPem: client.key,
        passphrase: secrets.passphrase,
        caPem: pki.ca.cert,
      },
    }),
    await create("ed25519", {
      url: receiver.url,
      headers: { "X-Endpoint": "ed25519" },
      signatureScheme: "standard-webhooks-ed25519",
    }),
  ];
  // Refused at the token endpoint: fails, and is retried.
  tokens.answerWith((request) =>
    request.basic?.clientSecret === secrets.wrongClientSecret
      ? { status: 401, body: { error: "invalid_client" } }
      : {},
  );
  const refused = await create("oauth2-refused", {
    url: receiver.url,
    auth: {
      type: "oauth2",
      tokenUrl: tokens.tokenUrl,
      clientId: "refused",
      clientSecret: secrets.wrongClientSecret,
    },
  });

  for (const id of [...ids, refused]) await api("POST", `/api/admin/webhooks/${id}/test`);
  const detailOf = async (id: number) => {
    const list = JSON.parse(await api("GET", `/api/admin/webhooks/${id}/deliveries`)) as {
      items: Array<{ id: number }>;
    };
    return api("GET", `/api/admin/webhooks/${id}/deliveries/${list.items[0]!.id}`);
  };
  await expect
    .poll(
      async () => {
        const details = await Promise.all(ids.map(detailOf));
        return details.every((text) => JSON.parse(text).status === "SUCCESS");
      },
      { interval: 100, timeout: 20_000 },
    )
    .toBe(true);
  await expect
    .poll(async () => JSON.parse(await detailOf(refused)).attempts, {
      interval: 100,
      timeout: 20_000,
    })
    .toBeGreaterThanOrEqual(2);

  // What went over the wire, in the forms it took there.
  const accessTokens = receiver.requests
    .map((r) => r.headers.authorization ?? "")
    .filter((h) => h.startsWith("Bearer ") && !h.includes(secrets.bearer))
    .map((h) => h.slice("Bearer ".length));
  expect(accessTokens.length).toBeGreaterThanOrEqual(2);
  const keyBody = client.key.split("\n").filter((line) => line !== "" && !line.startsWith("-----"));
  const rows = await keysOf(dialect, dir, database);
  const signingKey = openSecret(Buffer.from(SECRET_KEY, "hex"), rows.signingKey);
  const forbidden: Record<string, string> = {
    ...secrets,
    proxyPassword,
    basicOnTheWire: Buffer.from(`parley:${secrets.password}`).toString("base64"),
    proxyOnTheWire: Buffer.from(`egress:${proxyPassword}`).toString("base64"),
    clientSecretOnTheWire: Buffer.from(`parley:${secrets.clientSecret}`).toString("base64"),
    keyFirstLine: keyBody[0]!,
    keyMiddleLine: keyBody[Math.floor(keyBody.length / 2)]!,
    ed25519PrivateKey: signingKey,
    ed25519Seed: Buffer.from(signingKey, "base64").subarray(-32).toString("base64"),
    ...Object.fromEntries(accessTokens.map((token, i) => [`accessToken${i}`, token])),
  };

  // What admins and the UI read.
  const shown = [
    await api("GET", "/api/admin/webhooks"),
    ...(await Promise.all([...ids, refused].map((id) => api("GET", `/api/admin/webhooks/${id}`)))),
    ...(await Promise.all([...ids, refused].map(detailOf))),
    await api("GET", "/api/admin/deliveries?limit=200"),
    await (await fetch(`${server.url}/metrics`)).text(),
  ].join("\n");
  // The attempt log shows Authorization and custom values masked.
  const basicDetail = JSON.parse(await detailOf(ids[0]!)) as {
    attemptHistory: Array<{ requestHeaders: Record<string, string> }>;
  };
  expect(basicDetail.attemptHistory[0]!.requestHeaders).toMatchObject({
    authorization: "Basic ****",
    "x-endpoint": expect.stringMatching(/^\*\*\*\*.{1,4}$/),
  });

  await server.kill("SIGTERM");
  const logs = server.output();
  expect(logs.length).toBeGreaterThan(1000); // trace logging did log
  const stored = await dumpDatabase(dialect, dir, database);
  // The haystacks are the real ones: requests logged, endpoints and attempts stored, answers read.
  expect(logs).toContain("/api/admin/webhooks");
  expect(stored).toContain("oauth2-refused");
  expect(stored).toContain("invalid_client");
  expect(shown).toContain("Basic ****");

  for (const [name, value] of Object.entries(forbidden)) {
    expect(value.length, name).toBeGreaterThan(8);
    expect(logs.includes(value), `${name} in the logs`).toBe(false);
    expect(stored.includes(value), `${name} in the database`).toBe(false);
    expect(shown.includes(value), `${name} in the API or /metrics`).toBe(false);
  }
}

/** The sealed ed25519 private key of the endpoint that has one. */
async function keysOf(
  dialect: "sqlite" | "postgres",
  dir: string,
  database: Awaited<ReturnType<typeof POSTGRES.open>> | undefined,
): Promise<{ signingKey: string }> {
  if (dialect === "postgres") {
    const row = await database!.database.db
      .selectFrom("webhooks")
      .select("signing_key_ciphertext")
      .where("signing_key_ciphertext", "is not", null)
      .executeTakeFirstOrThrow();
    return { signingKey: row.signing_key_ciphertext! };
  }
  const { default: SQLite } = await import("better-sqlite3");
  const db = new SQLite(path.join(dir, "parley.db"), { readonly: true });
  try {
    const row = db
      .prepare(
        "SELECT signing_key_ciphertext FROM webhooks WHERE signing_key_ciphertext IS NOT NULL",
      )
      .get() as { signing_key_ciphertext: string };
    return { signingKey: row.signing_key_ciphertext };
  } finally {
    db.close();
  }
}

/** Every byte the database holds: the SQLite files, or every table of the PostgreSQL schema as text. */
async function dumpDatabase(
  dialect: "sqlite" | "postgres",
  dir: string,
  database: Awaited<ReturnType<typeof POSTGRES.open>> | undefined,
): Promise<string> {
  if (dialect === "sqlite") {
    return fs
      .readdirSync(dir)
      .filter((name) => name.startsWith("parley.db"))
      .map((name) => fs.readFileSync(path.join(dir, name)).toString("latin1"))
      .join("\n");
  }
  const db = database!.database.db;
  const tables = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(db);
  expect(tables.rows.length).toBeGreaterThan(10);
  const texts: string[] = [];
  for (const { table_name } of tables.rows) {
    const rows = await sql<{
      row: string;
    }>`SELECT t::text AS row FROM ${sql.table(table_name)} t`.execute(db);
    texts.push(...rows.rows.map((r) => r.row));
  }
  return texts.join("\n");
}

describe("credentials never leak", () => {
  it(
    "keeps every credential out of the logs, the SQLite database, /metrics and the admin API after deliveries with each",
    { timeout: 90_000 },
    () => run("sqlite"),
  );
  it(
    "keeps every credential out of the logs, the PostgreSQL database, /metrics and the admin API after deliveries with each",
    { timeout: 90_000, tags: ["postgres"] },
    () => run("postgres"),
  );
});
