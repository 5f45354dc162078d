import { describe, expect, it } from "vitest";
import { endpoint, type EndpointOptions } from "../src/index.js";

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

const snapshot = (value: unknown): unknown => structuredClone(value);

describe("inputs are never changed", () => {
  const defaults = deepFreeze({
    baseUrl: "https://chat.example.com",
    headers: { Authorization: "token t", "X-Team": "core" },
    mediaType: { previews: ["mercy-preview"], format: "raw" },
    org: "parley",
    labels: ["a", "b"],
    request: { timeout: 5 },
  } satisfies EndpointOptions);

  const calls: [string, EndpointOptions][] = [
    ["GET /orgs/{org}/rooms{?since}", { since: "2026-01-01", per_page: [1, 2], q: "a+b" }],
    ["POST /rooms/:roomId/messages", { roomId: 1, content: "hi", tags: { a: 1 } }],
    [
      "PATCH /rooms/{id}",
      { id: 2, headers: { Accept: "text/html" }, mediaType: { previews: ["x"] } },
    ],
    [
      "POST https://up.example.com/f{?name,label}",
      { name: "n", label: "l", data: { bytes: [1, 2] } },
    ],
    ["PUT /x", { request: { signal: null }, headers: { "content-type": "text/plain" }, data: "s" }],
  ];

  it("works on deep-frozen defaults and deep-frozen call options, changing neither", () => {
    const before = snapshot(defaults);
    const bound = endpoint.defaults(defaults);
    for (const [route, options] of calls) {
      const frozen = deepFreeze(options);
      const copy = snapshot(frozen);
      expect(() => bound(route, frozen)).not.toThrow();
      expect(() => bound.merge(route, frozen)).not.toThrow();
      expect(() => bound.parse(bound.merge(route, frozen))).not.toThrow();
      expect(() => bound({ ...frozen, url: route.split(" ")[1], method: "post" })).not.toThrow();
      expect(frozen).toEqual(copy);
    }
    expect(defaults).toEqual(before);
  });

  it("parses deep-frozen merged options", () => {
    const merged = deepFreeze(
      endpoint.merge("POST /x/{id}", { id: 1, a: [1], mediaType: { previews: ["p"] } }),
    );
    expect(endpoint.parse(merged)).toEqual({
      method: "post",
      url: "http://localhost:8080/x/1",
      headers: {
        accept: "application/vnd.parley.p-preview+json",
        "user-agent": endpoint.DEFAULTS.headers["user-agent"],
        "content-type": "application/json; charset=utf-8",
      },
      body: { a: [1] },
    });
  });

  it("never changes DEFAULTS", () => {
    const bound = endpoint.defaults({ org: "parley", mediaType: { previews: ["mercy"] } });
    const before = snapshot(bound.DEFAULTS);
    const globalBefore = snapshot(endpoint.DEFAULTS);
    bound("POST /x", {
      headers: { Accept: "text/html" },
      mediaType: { previews: ["y"], format: "raw" },
    });
    bound.defaults({ org: "other", headers: { a: "b" } });
    endpoint.merge("GET /", { headers: { accept: "x" } });
    expect(bound.DEFAULTS).toEqual(before);
    expect(endpoint.DEFAULTS).toEqual(globalBefore);
  });
});

describe("results are fresh", () => {
  it("returns a new result, headers and body on every call", () => {
    const a = endpoint("POST /x", { n: 1 });
    const b = endpoint("POST /x", { n: 1 });
    expect(a).not.toBe(b);
    expect(a.headers).not.toBe(b.headers);
    expect(a.body).not.toBe(b.body);
  });

  it("does not let changes to one result reach defaults or later results", () => {
    const bound = endpoint.defaults({ headers: { authorization: "t" }, org: "parley" });
    const first = bound("POST /rooms", { name: "a" });
    first.headers.authorization = "changed";
    first.headers["x-new"] = "1";
    (first.body as Record<string, unknown>).org = "changed";
    first.url = "changed";
    const second = bound("POST /rooms", { name: "a" });
    expect(second).toEqual({
      method: "post",
      url: "http://localhost:8080/rooms",
      headers: {
        accept: "application/vnd.parley.v3+json",
        "user-agent": endpoint.DEFAULTS.headers["user-agent"],
        authorization: "t",
        "content-type": "application/json; charset=utf-8",
      },
      body: { org: "parley", name: "a" },
    });
    expect(bound.DEFAULTS.headers.authorization).toBe("t");
  });

  it("shares nested default values only frozen, so a result cannot change them", () => {
    const bound = endpoint.defaults({ labels: ["a"] });
    const body = bound("POST /x").body as { labels: string[] };
    expect(() => body.labels.push("b")).toThrow(TypeError);
    expect(bound("POST /x").body).toEqual({ labels: ["a"] });
  });
});
