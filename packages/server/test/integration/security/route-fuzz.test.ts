import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { apiRoutes, fillPath, type ApiRoute } from "../../helpers/api-routes.js";
import { createTestApp, type TestApp, type TestUser } from "../../helpers/build-app.js";
import { describeEachDialect, TEST_DATABASE_URL } from "../../helpers/dialects.js";
import { IN_CI } from "../../helpers/services.js";

/**
 * Every route, with parameters and bodies generated from its own schema (and deliberately off
 * it: wrong types, unknown fields, hostile strings, huge numbers, no body, other content types),
 * under every kind of caller; date-times include leap seconds and far-past and far-future years.
 * Not one answer may be a 5xx. In CI (CI=true) each database gets 20,000 requests of its own;
 * locally 20,000 are shared by the databases in use, so one run costs about the same with
 * PostgreSQL as without.
 */
const REQUESTS = 20_000;
const PER_DIALECT = IN_CI ? REQUESTS : Math.ceil(REQUESTS / (TEST_DATABASE_URL ? 2 : 1));
const SEED = Number(process.env.PARLEY_FUZZ_SEED ?? 20_261_122);

type Json = unknown;
type Schema = Record<string, unknown>;

const HOSTILE_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\uD800",
  "💬".repeat(5000),
  "x".repeat(20_000),
  "<b>".repeat(5000),
  "<ul><li>".repeat(2000),
  "|a|\n|-|\n" + "|1\n".repeat(5000),
  "[a](http://x/".repeat(1200),
  "card &#52;111 1111 1111 1111",
  "4111 1111 1111 1111",
  "-----BEGIN PRIVATE KEY-----",
  "javascript:alert(1)",
  "http://127.0.0.1:1/hook",
  "https://example.com/hook",
  "../../etc/passwd",
  "%00",
  "9".repeat(400),
  "NaN",
  "null",
  "true",
  "MESSAGE_CREATED",
];

const HOSTILE_NUMBERS = [
  0,
  -1,
  1,
  2,
  3,
  2 ** 31,
  2 ** 53,
  Number.MAX_SAFE_INTEGER + 2,
  1e308,
  -1e308,
  0.5,
  1e-9,
];

/**
 * Date-times the format may let through and the queries must still read: leap seconds, the ends
 * of four-digit years, offsets of hours alone, and Date's own six-digit years (far future and
 * far past). Each is refused with a 400 or read as the instant it names, never a 5xx.
 */
const EDGE_DATE_TIMES = [
  "2026-06-30T23:59:60Z",
  "2016-12-31T23:59:60.999Z",
  "2026-07-01T00:59:60+01:00",
  "2026-11-20T08:00:00+01",
  "2026-11-20t08:00:00z",
  "0000-01-01T00:00:00Z",
  "0000-01-01T00:00:00+00:01",
  "9999-12-31T23:59:59.999Z",
  "9999-12-31T23:59:59.999-23:59",
  "+275760-09-13T00:00:00.000Z",
  "+275760-09-13T00:00:00.001Z",
  "-271821-04-20T00:00:00.000Z",
];

const anyJson = fc.jsonValue({ maxDepth: 3 });

/** A date-time: any instant Date holds, in its ISO form or as RFC 3339 spells it, or an edge. */
const dateTime = fc.oneof(
  fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
  fc
    .tuple(
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 1, max: 31 }),
      fc.integer({ min: 0, max: 23 }),
      fc.integer({ min: 0, max: 59 }),
      fc.constantFrom(0, 30, 59, 60),
      fc.constantFrom("Z", "+01:00", "-23:59", "+14"),
    )
    .map(
      ([year, month, day, hour, minute, second, zone]) =>
        `${String(year).padStart(4, "0")}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}${zone}`,
    ),
  fc.constantFrom(...EDGE_DATE_TIMES),
);

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** Percent-encodes a path segment; a lone surrogate (which cannot be encoded) is sent raw. */
function segment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Values for one JSON schema: mostly valid, sometimes of another type altogether. */
function valueFor(schema: Schema | undefined, depth = 0): fc.Arbitrary<Json> {
  const valid = validValueFor(schema, depth);
  return fc.oneof({ weight: 8, arbitrary: valid }, { weight: 1, arbitrary: anyJson });
}

function validValueFor(schema: Schema | undefined, depth: number): fc.Arbitrary<Json> {
  if (!schema || depth > 3) return anyJson;
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Json[]));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      if (schema.format === "date-time")
        return fc.oneof({ weight: 4, arbitrary: dateTime }, fc.string({ maxLength: 40 }));
      return fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.string({ unit: "binary", maxLength: 40 }),
        fc.constantFrom(...HOSTILE_STRINGS),
      );
    case "integer":
    case "number":
      return fc.oneof(
        fc.integer({ min: 1, max: 40 }),
        fc.integer(),
        fc.constantFrom(...HOSTILE_NUMBERS),
      );
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(valueFor(schema.items as Schema | undefined, depth + 1), { maxLength: 5 });
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const names = Object.keys(properties);
      const known = fc.record(
        Object.fromEntries(names.map((name) => [name, valueFor(properties[name], depth + 1)])),
        { requiredKeys: [] },
      );
      return fc.oneof(
        { weight: 6, arbitrary: known },
        {
          weight: 1,
          arbitrary: fc
            .tuple(known, fc.string({ maxLength: 10 }), anyJson)
            .map(([object, key, value]) => ({ ...object, [key]: value })),
        },
      );
    }
    default:
      return anyJson;
  }
}

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload: string | undefined;
}

interface Fixtures {
  ids: number[];
  tokens: { none: undefined; garbage: string; admin: TestUser; user: TestUser; bot: TestUser };
  ingestToken: string;
}

/** A path parameter: an id that exists, any number, or not a number at all. */
function paramFor(route: ApiRoute, name: string, fixtures: Fixtures): fc.Arbitrary<string> {
  if (name === "token")
    return fc.oneof(fc.constant(fixtures.ingestToken), fc.string({ maxLength: 60 }).map(segment));
  const schema = route.operation.parameters?.find((p) => p.name === name)?.schema;
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...fixtures.ids).map(String) },
    { weight: 2, arbitrary: validValueFor(schema, 0).map((value) => String(value)) },
    { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map(segment) },
  );
}

/**
 * For a route that takes date-times: the admin's request with its date-times alone and ids that
 * exist, so that generated times reach the queries instead of failing beside another generated
 * field. Undefined for the other routes.
 */
function dateTimesAlone(route: ApiRoute, pathNames: string[], fixtures: Fixtures) {
  const isDateTime = (schema: Schema | undefined) => schema?.format === "date-time";
  const inQuery = (route.operation.parameters ?? [])
    .filter((p) => p.in === "query" && isDateTime(p.schema))
    .map((p) => p.name);
  const bodySchema = route.operation.requestBody?.content?.["application/json"]?.schema;
  const properties = (bodySchema?.properties ?? {}) as Record<string, Schema>;
  const inBody = Object.keys(properties).filter((name) => isDateTime(properties[name]));
  if (inQuery.length === 0 && inBody.length === 0) return undefined;
  const required = ((bodySchema?.required ?? []) as string[]).filter((n) => inBody.includes(n));
  const times = (names: string[], requiredKeys: string[]) =>
    fc.record(Object.fromEntries(names.map((name) => [name, dateTime])), { requiredKeys });
  return fc.record({
    params: fc.tuple(...pathNames.map(() => fc.constantFrom(...fixtures.ids).map(String))),
    query: times(inQuery, []),
    caller: fc.constant("admin" as const),
    body:
      inBody.length === 0
        ? fc.constant(undefined)
        : times(inBody, required).map((value) => JSON.stringify(value)),
    contentType: fc.constant("application/json"),
    accept: fc.constant(undefined),
  });
}

function requestFor(route: ApiRoute, fixtures: Fixtures): fc.Arbitrary<FuzzRequest> {
  const pathNames = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  const query = (route.operation.parameters ?? []).filter((p) => p.in === "query");
  const bodySchema = route.operation.requestBody?.content?.["application/json"]?.schema;
  const callers = fc.constantFrom(
    "admin",
    "user",
    "bot",
    "none",
    "garbage",
    "admin",
  ) as fc.Arbitrary<keyof Fixtures["tokens"]>;
  const body = fc.oneof(
    { weight: 6, arbitrary: valueFor(bodySchema).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
    { weight: 1, arbitrary: fc.constantFrom("{", "[".repeat(10_000), "\u0000", '{"a":1}x') },
  );
  const contentType = fc.constantFrom(
    "application/json",
    "application/json",
    "application/json",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=xyz",
    "application/json; charset=latin1",
  );
  const accept = fc.constantFrom(
    undefined,
    "application/vnd.parley.v3.full+json",
    "application/vnd.parley.v3.text+json",
    "*/*",
    "garbage/;;",
  );
  const general = fc.record({
    params: fc.tuple(...pathNames.map((name) => paramFor(route, name, fixtures))),
    query: fc.record(Object.fromEntries(query.map((p) => [p.name, validValueFor(p.schema, 0)])), {
      requiredKeys: [],
    }),
    caller: callers,
    body,
    contentType,
    accept,
  });
  const focused = dateTimesAlone(route, pathNames, fixtures);
  return (
    focused === undefined
      ? general
      : fc.oneof({ weight: 3, arbitrary: general }, { weight: 1, arbitrary: focused })
  ).map(({ params, query: search, caller, body: payload, contentType: type, accept: wanted }) => {
    let i = 0;
    const path = fillPath(route.path, () => params[i++]!);
    const qs = new URLSearchParams(
      Object.entries(search).map(([key, value]) => [key, String(value)]),
    ).toString();
    const headers: Record<string, string> = {};
    const token = fixtures.tokens[caller];
    if (typeof token === "string") headers.authorization = token;
    else if (token) headers.authorization = token.headers.authorization;
    if (payload !== undefined && route.method !== "GET") headers["content-type"] = type;
    if (wanted) headers.accept = wanted;
    return {
      method: route.method,
      url: qs ? `${path}?${qs}` : path,
      headers,
      payload: route.method === "GET" || route.method === "DELETE" ? undefined : payload,
    };
  });
}

describeEachDialect("every route under fuzzing on $name", (dialect) => {
  let t: TestApp;
  let fixtures: Fixtures;
  let callerIds: Set<number>;
  beforeAll(async () => {
    // A generous ingest rate, so that most ingest requests reach the body and the database.
    t = await createTestApp(dialect, { rateLimitWebhookIngest: "100000/1m" });
    const user = await t.user("user", "fuzz-user");
    const bot = await t.user("bot", "fuzz-bot");
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: user.headers,
      payload: { name: "fuzz" },
    });
    const roomId = room.json<{ id: number }>().id;
    await t.app.inject({
      method: "POST",
      url: "/api/dms",
      headers: user.headers,
      payload: { userId: bot.id },
    });
    await t.app.inject({
      method: "POST",
      url: `/api/rooms/${roomId}/messages`,
      headers: user.headers,
      payload: { content: "hello" },
    });
    const inbound = await t.app.inject({
      method: "POST",
      url: "/api/admin/inbound-webhooks",
      headers: t.admin.headers,
      payload: { roomId, displayName: "fuzz" },
    });
    await t.app.inject({
      method: "POST",
      url: "/api/admin/webhooks",
      headers: t.admin.headers,
      payload: {
        url: "https://receiver.example/hook",
        secret: "a-secret-of-enough-length",
        events: ["MESSAGE_CREATED"],
      },
    });
    const victims = [await t.user("user"), await t.user("bot"), await t.user("admin")];
    callerIds = new Set([t.admin.id, user.id, bot.id]);
    fixtures = {
      ids: [1, 2, 3, 4, 5, 6, 7, 8, roomId, bot.id, user.id, ...victims.map((v) => v.id)],
      tokens: {
        none: undefined,
        garbage: "Bearer eyJhbGciOiJIUzI1NiJ9.e30.AAAA",
        admin: t.admin,
        user,
        bot,
      },
      ingestToken: inbound.json<{ token: string }>().token,
    };
  });
  afterAll(async () => {
    await t.close();
  });

  it(`answers ${PER_DIALECT} generated requests without a 5xx`, { timeout: 600_000 }, async () => {
    const routes = apiRoutes(t.app);
    expect(routes.length).toBeGreaterThan(40);
    // A few generated requests are skipped (see below): sample a little more than the share.
    const perRoute = Math.ceil((PER_DIALECT * 1.05) / routes.length);
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let sent = 0;
    for (const [index, route] of routes.entries()) {
      const requests = fc.sample(requestFor(route, fixtures), {
        numRuns: perRoute,
        seed: SEED + index,
      });
      for (const request of requests) {
        // The callers stay: deleting or disabling them would end the run's coverage of their
        // roles (the victims are there to be deleted and disabled).
        const target = /^\/api\/admin\/users\/(\d+)(\/disable|\/revoke-tokens)?$/.exec(
          request.url,
        )?.[1];
        if (request.method !== "GET" && target !== undefined && callerIds.has(Number(target)))
          continue;
        const res = await t.app.inject({
          method: request.method as "GET",
          url: request.url,
          headers: request.headers,
          ...(request.payload === undefined ? {} : { payload: request.payload }),
        });
        sent++;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode >= 500 && failures.length < 10)
          failures.push(
            `${request.method} ${request.url.slice(0, 120)} -> ${res.statusCode} ${res.body.slice(0, 200)}`,
          );
      }
    }
    const distribution = Object.fromEntries([...statuses].sort(([a], [b]) => a - b));
    console.log(`${dialect.name}: ${sent} requests, statuses ${JSON.stringify(distribution)}`);
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(PER_DIALECT);
  });
});
