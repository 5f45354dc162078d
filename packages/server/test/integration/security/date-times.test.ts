import { afterAll, beforeAll, expect, it } from "vitest";
import { apiRoutes, fillPath, type ApiRoute } from "../../helpers/api-routes.js";
import { createTestApp, type TestApp } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";

type Schema = { format?: string; properties?: Record<string, Schema> };

/** Every date-time a request may carry: where it goes, the route and the field. */
interface DateTimeField {
  route: ApiRoute;
  in: "query" | "body";
  name: string;
}

function dateTimeFields(routes: ApiRoute[]): DateTimeField[] {
  const fields: DateTimeField[] = [];
  for (const route of routes) {
    for (const parameter of route.operation.parameters ?? [])
      if ((parameter.schema as Schema | undefined)?.format === "date-time")
        fields.push({ route, in: parameter.in as "query", name: parameter.name });
    const body = route.operation.requestBody?.content?.["application/json"]?.schema as
      Schema | undefined;
    for (const [name, schema] of Object.entries(body?.properties ?? {}))
      if (schema.format === "date-time") fields.push({ route, in: "body", name });
  }
  return fields;
}

/** Date-times the `date-time` format of JSON Schema lets through but no Date can hold. */
const UNREADABLE = [
  // A leap second: PostgreSQL answered 500 (bigint "NaN"), SQLite an empty page.
  "2026-06-30T23:59:60Z",
  "2026-07-01T00:59:60+01:00",
  // An offset of hours alone, which RFC 3339 does not have: the same.
  "2026-11-20T08:00:00+01",
];

/** RFC 3339's other spellings: a lower-case t and z, a space. */
const READABLE = ["2026-11-20t08:00:00z", "2026-11-20 08:00:00Z", "2026-11-20T09:00:00+01:00"];

/** Beyond four-digit years: refused by the format. */
const OUT_OF_RANGE = [
  "+275760-09-13T00:00:00.001Z",
  "+275760-09-13T00:00:00.000Z",
  "-271821-04-20T00:00:00.000Z",
  "0000-01-01T00:00:00+00:01",
];

/** The first instant a date-time names: the `since` of a recover that tests its `until`. */
const FIRST = "0000-01-01T00:00:00Z";

/** As far back and ahead as a date-time goes: taken, and read as the instant it names. */
const FAR = ["0000-01-01T00:00:00.001Z", "9999-12-31T23:59:59.999Z"];

describeEachDialect("date-times on every route on $name", (dialect) => {
  let t: TestApp;
  let webhookId: number;
  let roomId: number;
  let fields: DateTimeField[];
  beforeAll(async () => {
    t = await createTestApp(dialect);
    const created = await t.app.inject({
      method: "POST",
      url: "/api/admin/webhooks",
      headers: t.admin.headers,
      payload: {
        name: "times",
        url: "https://receiver.example/hook",
        secret: "a-secret-of-enough-length",
        events: ["MESSAGE_CREATED"],
      },
    });
    webhookId = created.json<{ id: number }>().id;
    const room = await t.app.inject({
      method: "POST",
      url: "/api/rooms",
      headers: t.admin.headers,
      payload: { name: "times" },
    });
    roomId = room.json<{ id: number }>().id;
    fields = dateTimeFields(apiRoutes(t.app));
  });
  afterAll(async () => {
    await t?.close();
  });

  /**
   * The route with `field` set to `value` and every other field left out (`since` when required;
   * the words of a search).
   */
  function send(field: DateTimeField, value: string) {
    const { route } = field;
    // The path's ids: this test's room, and its endpoint for a route under /webhooks/{id}.
    const url = fillPath(route.path, (name) => String(name === "roomId" ? roomId : webhookId));
    const others = route.method === "POST" && field.name !== "since" ? { since: FIRST } : {};
    const query: Record<string, string> = route.path === "/api/search" ? { q: "times" } : {};
    if (field.in === "query")
      return t.app.inject({
        method: route.method,
        url: `${url}?${new URLSearchParams({ ...query, [field.name]: value }).toString()}`,
        headers: t.admin.headers,
      });
    return t.app.inject({
      method: route.method,
      url,
      headers: t.admin.headers,
      payload: { ...others, [field.name]: value },
    });
  }

  it("finds the date-times of the delivery search and of recover", () => {
    expect(fields.map((f) => `${f.route.method} ${f.route.path} ${f.in}.${f.name}`).sort()).toEqual(
      expect.arrayContaining([
        "GET /api/admin/deliveries query.since",
        "GET /api/admin/deliveries query.until",
        "POST /api/admin/webhooks/{id}/recover body.since",
        "POST /api/admin/webhooks/{id}/recover body.until",
      ]),
    );
  });

  it("answers 400 validation_failed, naming the field, to a date-time no instant matches", async () => {
    for (const field of fields)
      for (const value of [...UNREADABLE, ...OUT_OF_RANGE]) {
        const res = await send(field, value);
        const where = `${field.route.method} ${field.route.path} ${field.name}=${value}`;
        expect(res.statusCode, where).toBe(400);
        expect(res.json(), where).toMatchObject({
          code: "validation_failed",
          field: `${field.in === "query" ? "querystring" : "body"}.${field.name}`,
        });
      }
  });

  it("takes the years 0 to 9999, and RFC 3339's other spellings", async () => {
    for (const field of fields)
      for (const value of [...FAR, ...READABLE]) {
        const res = await send(field, value);
        const where = `${field.route.method} ${field.route.path} ${field.name}=${value}`;
        expect(res.statusCode, `${where}: ${res.body}`).toBeLessThan(300);
      }
  });
});
