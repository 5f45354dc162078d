import type { LightMyRequestResponse, RouteOptions } from "fastify";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect, SQLITE } from "../../helpers/dialects.js";

/**
 * Every route, every kind of bad input, on every database: NUL in each string, ids out of range
 * in each id, wrong types in each field, bodies of 1 MiB and worse, with an admin token and with
 * none. Nothing may answer 5xx. The routes are read from the app itself as it adds them, so a
 * route added later is covered without touching this file.
 */

interface Route {
  method: string;
  /** Fastify's form: `/api/rooms/:roomId`. */
  url: string;
  params: string[];
  /** From the route's schema; a route without one has none. */
  paramSchemas: Record<string, JsonSchema>;
  querySchemas: Record<string, JsonSchema>;
  body: JsonSchema | undefined;
}

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  [keyword: string]: unknown;
}

interface Attack {
  /** What is being tried, for the failure list: "params.roomId=1e21". */
  what: string;
  path: Record<string, string>;
  query?: string;
  contentType?: string;
  body?: string | Buffer;
  /** The status an admin must get: ids out of range and NUL characters answer 400. */
  adminStatus?: number;
}

interface Fixtures {
  other: TestUser;
  roomId: number;
  dmId: number;
  messageId: number;
  inboundId: number;
  inboundToken: string;
  endpointId: number;
  deliveryId: number;
}

/** Path ids that are not positive safe integers; each must answer 400. */
const BAD_IDS = [
  "9223372036854775808",
  "9223372036854775807",
  "99999999999999999999999",
  "9007199254740992",
  "1e21",
  "1e20",
  "-1",
  "0",
  "1.5",
  "abc",
  "Infinity",
  "NaN",
];
/** The same as JSON literals in a body (raw text: a JavaScript number would lose the digits). */
const BAD_JSON_IDS = [
  "9223372036854775808",
  "9007199254740992",
  "1e21",
  "1e20",
  "-1",
  "0",
  "1.5",
  '"1"',
  '"abc"',
];
const NUL_TEXTS = ["%00", "a%00b"];
/** Path segments Fastify refuses before routing: bad percent-encoding, over 100 characters. */
const BAD_SEGMENTS = ["%E0%A4%A", "%", "%C0%80", "1".repeat(200)];
const NUL_JSON = ['"\\u0000"', '"a\\u0000b"'];
/** Strings both databases must store or refuse cleanly: lone surrogates, controls, non-characters. */
const ODD_JSON = [
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"\\u001b[31mred"',
  '"\\u0001\\u007f"',
  '"\\uffff"',
];
const WRONG_TYPES = ["null", "true", "42", '"text"', "[]", "{}", '["\\u0000"]', '{"\\u0000":1}'];
const MIB = 1024 * 1024;

/** Every route as the app adds it (HEAD twins of GET routes aside), with its schemas. */
async function readRoutes(): Promise<Route[]> {
  const added: RouteOptions[] = [];
  const t = await createTestApp(SQLITE, {}, { onRoute: (route) => added.push(route) });
  await t.close();
  return added.flatMap((route) =>
    [route.method]
      .flat()
      .filter((method) => method !== "HEAD")
      .map((method) => {
        const schema = (route.schema ?? {}) as Record<string, JsonSchema | undefined>;
        const body = schema.body;
        return {
          method,
          url: route.url,
          params: [...route.url.matchAll(/:(\w+)|\*/g)].map((m) => m[1] ?? "*"),
          paramSchemas: schema.params?.properties ?? {},
          querySchemas: schema.querystring?.properties ?? {},
          // A multipart route documents its form under `content`; it has no JSON body schema.
          body: body && !("content" in body) ? body : undefined,
        };
      }),
  );
}

// The route list comes from a throwaway app, so that each route is a test of its own.
const ROUTES = await readRoutes();

const isInteger = (schema: JsonSchema | undefined): boolean =>
  schema !== undefined && [schema.type].flat().includes("integer");
const isString = (schema: JsonSchema | undefined): boolean =>
  schema !== undefined && [schema.type].flat().includes("string");

/** A plausible value for a path parameter: the fixture the route is about, so writes are reached. */
function paramValue(route: Route, name: string, f: Fixtures): string {
  switch (name) {
    case "roomId":
      return String(f.roomId);
    case "dmId":
      return String(f.dmId);
    case "messageId":
      return String(f.messageId);
    case "deliveryId":
      return String(f.deliveryId);
    case "token":
      return f.inboundToken;
    case "id":
      if (route.url.startsWith("/api/admin/users")) return String(f.other.id);
      if (route.url.startsWith("/api/admin/webhooks")) return String(f.endpointId);
      if (route.url.startsWith("/api/admin/inbound-webhooks")) return String(f.inboundId);
      return "1";
    default:
      return "x";
  }
}

/** True when `literal` is a safe integer the schema's minimum and maximum allow. */
function withinRange(schema: JsonSchema, literal: string): boolean {
  const value = Number(literal);
  if (!Number.isSafeInteger(value)) return false;
  const bounds = schema as JsonSchema & { maximum?: number };
  return value >= (bounds.minimum ?? -Infinity) && value <= (bounds.maximum ?? Infinity);
}

/** A value the schema accepts, so that one bad field at a time is what the route sees. */
function sample(schema: JsonSchema, name: string, f: Fixtures): unknown {
  if (schema.default !== undefined) return schema.default;
  if (schema.enum) return schema.enum[0];
  const type = [schema.type].flat().find((candidate) => candidate !== "null");
  switch (type) {
    case "integer":
    case "number":
      if (name === "roomId") return f.roomId;
      if (name === "userId") return f.other.id;
      return schema.minimum ?? 1;
    case "boolean":
      return true;
    case "array":
      return name === "events" ? ["MESSAGE_CREATED"] : [];
    case "object":
      return Object.fromEntries(
        (schema.required ?? []).map((key) => [key, sample(schema.properties?.[key] ?? {}, key, f)]),
      );
    default:
      if (/url/i.test(name)) return "https://example.com/a.png";
      if (name === "secret") return "s".repeat(32);
      if (name === "username") return `u${Math.random().toString(36).slice(2, 10)}`;
      return "x";
  }
}

/** The JSON text of `base` with `field` set to a raw JSON literal. */
function withField(base: Record<string, unknown>, field: string, literal: string): string {
  const marker = "__bad_input_marker__";
  return JSON.stringify({ ...base, [field]: marker }).replace(`"${marker}"`, () => literal);
}

/** A Slack rich_text list in a list in a list...: rendered one call per level, within 64 KiB. */
function slackNestedList(depth: number): string {
  const open = '{"type":"rich_text_list","elements":['.repeat(depth);
  const close = "]}".repeat(depth);
  return `{"blocks":[{"type":"rich_text","elements":[${open}${close}]}]}`;
}

function multipart(fieldName: string, fileName: string, content: Buffer | string): Buffer {
  const boundary = "----bad-input-boundary";
  return Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${fieldName}"; filename="${fileName}"\r\n` +
        "Content-Type: application/octet-stream\r\n\r\n",
    ),
    Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}
const MULTIPART = "multipart/form-data; boundary=----bad-input-boundary";

function attacksOn(route: Route, f: Fixtures): Attack[] {
  const path = Object.fromEntries(route.params.map((name) => [name, paramValue(route, name, f)]));
  const publicIngest = route.url.startsWith("/api/public/");
  // The public ingest routes take third-party payloads: the content rules there refuse or strip
  // NUL in the fields they use, and an unusable token is a 404 whatever it contains.
  const nulStatus = publicIngest ? undefined : 400;
  const attacks: Attack[] = [];

  for (const name of route.params) {
    const integer = isInteger(route.paramSchemas[name]);
    for (const value of BAD_IDS)
      attacks.push({
        what: `params.${name}=${value}`,
        path: { ...path, [name]: value },
        ...(integer ? { adminStatus: 400 } : {}),
      });
    for (const value of NUL_TEXTS)
      attacks.push({
        what: `params.${name}=${value}`,
        path: { ...path, [name]: value },
        ...(nulStatus ? { adminStatus: nulStatus } : {}),
      });
    for (const value of BAD_SEGMENTS)
      attacks.push({
        what: `params.${name}=${value.slice(0, 12)}`,
        path: { ...path, [name]: value },
      });
  }

  for (const [name, schema] of Object.entries(route.querySchemas)) {
    for (const value of BAD_IDS)
      attacks.push({
        what: `querystring.${name}=${value}`,
        path,
        query: `${name}=${value}`,
        ...(isInteger(schema) ? { adminStatus: 400 } : {}),
      });
    for (const value of NUL_TEXTS)
      attacks.push({
        what: `querystring.${name}=${value}`,
        path,
        query: `${name}=${value}`,
        adminStatus: 400,
      });
    attacks.push({ what: `querystring.${name} twice`, path, query: `${name}=1&${name}=2` });
    attacks.push({
      what: `querystring.${name} 100 KiB`,
      path,
      query: `${name}=${"9".repeat(100 * 1024)}`,
    });
  }
  attacks.push({ what: "querystring NUL in a name", path, query: "a%00=1" });

  const json = "application/json";
  const base =
    route.body && [route.body.type].flat().includes("object")
      ? (sample(route.body, "body", f) as Record<string, unknown>)
      : {};
  for (const [name, schema] of Object.entries(route.body?.properties ?? {})) {
    const integer = isInteger(schema);
    for (const literal of BAD_JSON_IDS)
      attacks.push({
        what: `body.${name}=${literal}`,
        path,
        contentType: json,
        body: withField(base, name, literal),
        // Bad for an id; an integer field whose range holds the value (overlapSeconds: 0) is fine.
        ...(integer && !withinRange(schema, literal) ? { adminStatus: 400 } : {}),
      });
    for (const literal of NUL_JSON)
      attacks.push({
        what: `body.${name}=${literal}`,
        path,
        contentType: json,
        body: withField(base, name, literal),
        ...(isString(schema) && nulStatus ? { adminStatus: nulStatus } : {}),
      });
    for (const literal of [...WRONG_TYPES, ...ODD_JSON])
      attacks.push({
        what: `body.${name}=${literal}`,
        path,
        contentType: json,
        body: withField(base, name, literal),
      });
    attacks.push({
      what: `body.${name} 70000 characters`,
      path,
      contentType: json,
      body: withField(base, name, JSON.stringify("é".repeat(70_000))),
    });
  }

  if (route.method !== "GET") {
    const whole: Array<[string, string | Buffer, string?]> = [
      ["body NUL in a field name", withField(base, "a\u0000b", "1")],
      ["body NUL in a nested string", withField(base, "extra", '{"deep":["\\u0000"]}')],
      ["body array", "[]"],
      ["body string", '"text"'],
      ["body number", "42"],
      ["body null", "null"],
      ["body malformed", '{"content": "half'],
      ["body __proto__", withField(base, "__proto__", '{"polluted":true}')],
      ["body constructor.prototype", withField(base, "constructor", '{"prototype":{"x":1}}')],
      ["body nested 100000 deep", "[".repeat(100_000) + "]".repeat(100_000)],
      [
        "body nested 50000 deep with __proto__",
        "[".repeat(50_000) + '{"__proto__":{"x":1}}' + "]".repeat(50_000),
      ],
      ["body Slack lists nested 1500 deep (under 64 KiB)", slackNestedList(1500)],
      ["body 1 MiB exactly", withField(base, "padding", JSON.stringify("p".repeat(MIB - 64)))],
      ["body over 1 MiB", withField(base, "padding", JSON.stringify("p".repeat(MIB + 16)))],
      ["body 1 MiB of content", JSON.stringify({ content: "c".repeat(MIB) })],
      ["body 1 MiB of NUL escapes", `["${"\\u0000".repeat(170_000)}"]`],
      ["body text/plain", "hello", "text/plain"],
      [
        "body form",
        "payload=%7B%22text%22%3A%22a%00b%22%7D&a%00=b",
        "application/x-www-form-urlencoded",
      ],
      ["body form 1 MiB", `payload=${"x".repeat(MIB)}`, "application/x-www-form-urlencoded"],
      ["body octet-stream", Buffer.alloc(1024, 0), "application/octet-stream"],
      ["body multipart NUL filename", multipart("file", "a\u0000b.txt", "hello"), MULTIPART],
      ["body multipart NUL field", multipart("fi\u0000le", "a.txt", "hello"), MULTIPART],
      ["body multipart 1 MiB", multipart("file", "big.bin", Buffer.alloc(MIB, 7)), MULTIPART],
      ["body multipart truncated", multipart("file", "a.txt", "hello").subarray(0, 90), MULTIPART],
      ["body multipart no boundary", "--x\r\n\r\n", "multipart/form-data"],
      ["body json charset", JSON.stringify(base), "application/json; charset=latin1"],
    ];
    for (const [what, body, contentType] of whole)
      attacks.push({ what, path, contentType: contentType ?? json, body });
  }
  return attacks;
}

function urlOf(route: Route, path: Record<string, string>, query?: string): string {
  const url = route.url.replace(/:(\w+)|\*/g, (whole, name: string | undefined) =>
    name === undefined ? (path["*"] ?? "x") : (path[name] ?? whole),
  );
  return query === undefined ? url : `${url}?${query}`;
}

async function createFixtures(t: TestApp): Promise<Fixtures> {
  const other = await t.user("user");
  const call = async (method: "POST", url: string, payload: object, status: number) => {
    const res = await t.app.inject({ method, url, headers: t.admin.headers, payload });
    if (res.statusCode !== status)
      throw new Error(`fixture ${method} ${url} answered ${res.statusCode}: ${res.body}`);
    return res.json() as Record<string, unknown>;
  };
  const roomId = (await call("POST", "/api/rooms", { name: "fixtures" }, 201)).id as number;
  const dmId = (await call("POST", "/api/dms", { userId: other.id }, 201)).id as number;
  const messageId = (await call("POST", `/api/rooms/${roomId}/messages`, { content: "hello" }, 201))
    .id as number;
  const inbound = await call(
    "POST",
    "/api/admin/inbound-webhooks",
    { roomId, displayName: "Hook" },
    201,
  );
  const endpoint = await call(
    "POST",
    "/api/admin/webhooks",
    {
      name: "sink",
      url: "https://hooks.example.com/sink",
      secret: "s".repeat(32),
      events: ["MESSAGE_CREATED"],
    },
    201,
  );
  const delivery = await call("POST", `/api/admin/webhooks/${endpoint.id}/test`, {}, 202);
  return {
    other,
    roomId,
    dmId,
    messageId,
    inboundId: inbound.id as number,
    inboundToken: inbound.token as string,
    endpointId: endpoint.id as number,
    deliveryId: delivery.deliveryId as number,
  };
}

describeEachDialect("bad input on $name", (dialect) => {
  let t: TestApp;
  const tally = new Map<string, number>();
  let requests = 0;

  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "1000000/1m" });
  });
  afterAll(async () => {
    await t.close();
    const statuses = [...tally.entries()].sort(([a], [b]) => a.localeCompare(b));
    console.log(
      `bad input on ${dialect.name}: ${requests} requests over ${ROUTES.length} routes\n` +
        statuses.map(([key, count]) => `  ${key}: ${count}`).join("\n"),
    );
  });

  it("reads at least the chat, webhook and ingest routes from the app", () => {
    const urls = ROUTES.map((route) => `${route.method} ${route.url}`);
    expect(urls).toContain("POST /api/rooms/:roomId/messages");
    expect(urls).toContain("PATCH /api/admin/webhooks/:id");
    expect(urls).toContain("POST /api/public/webhooks/ingest/:token/slack");
    expect(ROUTES.find((route) => route.url === "/api/rooms/:roomId")?.paramSchemas.roomId).toEqual(
      expect.objectContaining({ type: "integer" }),
    );
  });

  it("answers the reported cases with 400 validation_failed naming the field", async () => {
    const f = await createFixtures(t);
    const cases: Array<[string, string, object | undefined, string]> = [
      ["GET", "/api/rooms/9223372036854775808", undefined, "params.roomId"],
      ["GET", "/api/rooms/1e21", undefined, "params.roomId"],
      ["GET", "/api/admin/users?limit=Infinity", undefined, "querystring.limit"],
      ["POST", "/api/dms", { userId: 1e20 }, "body.userId"],
      ["POST", `/api/rooms/${f.roomId}/messages`, { content: "a\u0000b" }, "body.content"],
      ["POST", "/api/rooms", { name: "a\u0000b" }, "body.name"],
      ["POST", `/api/dms/${f.dmId}/promote`, { name: "\u0000" }, "body.name"],
      [
        "POST",
        "/api/admin/users",
        { username: "nul", displayName: "N\u0000", role: "user" },
        "body.displayName",
      ],
      [
        "POST",
        "/api/admin/webhooks",
        { name: "a\u0000", url: "https://a.example", secret: "s".repeat(16), events: [] },
        "body.name",
      ],
      [
        "PATCH",
        `/api/admin/inbound-webhooks/${f.inboundId}`,
        { displayName: "\u0000" },
        "body.displayName",
      ],
    ];
    for (const [method, url, payload, field] of cases) {
      const res = await t.app.inject({
        method: method as "GET",
        url,
        headers: t.admin.headers,
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(400);
      expect(res.json(), `${method} ${url}`).toMatchObject({ code: "validation_failed", field });
    }
  });

  it.each(ROUTES.map((route) => [`${route.method} ${route.url}`, route] as const))(
    "%s never answers 5xx to bad input",
    async (_name, route) => {
      const f = await createFixtures(t);
      const failures: string[] = [];
      for (const attack of attacksOn(route, f)) {
        for (const who of ["admin", "anonymous"] as const) {
          const res: LightMyRequestResponse = await t.app.inject({
            method: route.method as "GET",
            url: urlOf(route, attack.path, attack.query),
            headers: {
              ...(who === "admin" ? t.admin.headers : {}),
              ...(attack.contentType ? { "content-type": attack.contentType } : {}),
            },
            ...(attack.body === undefined ? {} : { payload: attack.body }),
          });
          requests++;
          const type = String(res.headers["content-type"] ?? "").split(";")[0]!;
          const code =
            type === "application/problem+json"
              ? String((res.json() as { code?: unknown }).code)
              : type === "text/plain"
                ? res.body.slice(0, 30)
                : type;
          const key = `${res.statusCode} ${code}`;
          tally.set(key, (tally.get(key) ?? 0) + 1);
          const wanted = who === "admin" ? attack.adminStatus : undefined;
          if (res.statusCode >= 500 || (wanted !== undefined && res.statusCode !== wanted))
            failures.push(`${who} ${attack.what}: ${res.statusCode} ${res.body.slice(0, 160)}`);
        }
      }
      expect(failures).toEqual([]);
    },
  );
});
