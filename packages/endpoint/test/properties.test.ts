import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { endpoint, type EndpointOptions } from "../src/index.js";

const OPTION_KEYS = ["method", "baseUrl", "url", "headers", "mediaType", "request", "data"];

const method = fc.constantFrom(
  "GET",
  "get",
  "HEAD",
  "POST",
  "post",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
);
const name = fc
  .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/)
  .filter((key) => !OPTION_KEYS.includes(key));
const scalar = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);
const value = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 3 }),
  fc.dictionary(name, scalar, { maxKeys: 3 }),
);
const headerName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,12}$/);
const template = fc.oneof(
  fc.constantFrom(
    "/",
    "/rooms",
    "/rooms/{id}",
    "/repos/:owner/:repo",
    "{/path*}{?q,page}",
    "https://x.test/{+rest}",
  ),
  fc.string({ maxLength: 20 }),
);

// Keys that collide with defaults' keys and with `data`, so layering is exercised.
const paramName = fc.oneof(name, fc.constantFrom("org", "per_page", "data", "id", "q"));
const headers = fc.dictionary(
  fc.oneof(headerName, fc.constantFrom("Accept", "accept", "Content-Type", "AUTHORIZATION")),
  fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant(undefined)),
  { maxKeys: 4 },
);

const options: fc.Arbitrary<EndpointOptions> = fc
  .record(
    {
      method: fc.oneof(method, fc.constant(undefined)),
      url: fc.oneof(template, fc.constant(undefined)),
      baseUrl: fc.constantFrom("http://localhost:8080", "https://api.example.com/v1/", undefined),
      headers,
      mediaType: fc.record(
        {
          format: fc.constantFrom("raw", "text+json", "", undefined),
          previews: fc.array(fc.constantFrom("mercy", "a-preview", "mercy-preview")),
        },
        { requiredKeys: [] },
      ),
      request: fc.oneof(fc.constant(undefined), fc.record({ timeout: fc.integer() })),
      params: fc.dictionary(paramName, value, { maxKeys: 5 }),
    },
    { requiredKeys: ["params"] },
  )
  .map(({ params, ...rest }) => ({ ...params, ...rest }));

const route = fc.tuple(method, template).map(([m, u]) => `${m} ${u}`);

describe("properties", () => {
  const bound = endpoint.defaults({
    org: "parley",
    per_page: [1, 2],
    headers: { Authorization: "t", "X-Null": null },
    mediaType: { previews: ["p"] },
  });
  const posting = bound.defaults({
    method: "POST",
    url: "/orgs/{org}/items{?q}",
    baseUrl: "https://api.example.com/",
    data: { default: true },
    request: { retries: 2 },
    headers: { accept: "application/vnd.github.v3+json" },
    mediaType: { format: "raw" },
  });

  it("endpoint(x) deep-equals parse(merge(x))", () => {
    fc.assert(
      fc.property(fc.option(route, { nil: undefined }), options, (r, o) => {
        for (const e of [endpoint, bound, posting]) {
          const direct = r === undefined ? e(o) : e(r, o);
          const layered = e.parse(r === undefined ? e.merge(o) : e.merge(r, o));
          expect(direct).toEqual(layered);
        }
      }),
    );
  });

  it("returns header names in lowercase only", () => {
    fc.assert(
      fc.property(route, options, (r, o) => {
        for (const headerName of Object.keys(bound(r, o).headers)) {
          expect(headerName).toBe(headerName.toLowerCase());
        }
      }),
    );
  });

  it("returns a lowercase method", () => {
    fc.assert(
      fc.property(options, (o) => {
        const { method: result } = endpoint(o);
        expect(result).toBe(result.toLowerCase());
      }),
    );
  });

  it("never sends a url placeholder's value in the query or body", () => {
    const placeholderUrl = fc.constantFrom(
      (n: string) => `/a/{${n}}`,
      (n: string) => `/a/:${n}`,
      (n: string) => `/a{/${n}}/b`,
      (n: string) => `https://x.test/a{?${n}}`,
      (n: string) => `/a/{+${n}}`,
    );
    fc.assert(
      fc.property(
        method,
        name,
        placeholderUrl,
        fc.dictionary(name, fc.string(), { maxKeys: 4 }),
        (m, n, url, rest) => {
          const marker = "PLACEHOLDER-VALUE-7f3a";
          const result = endpoint({ ...rest, method: m, url: url(n), [n]: marker });
          const query = result.url.includes("?") ? result.url.slice(result.url.indexOf("?")) : "";
          const inUrlTemplateQuery = url(n).includes("{?");
          if (!inUrlTemplateQuery) expect(query).not.toContain(marker);
          expect(result.url.split(marker).length - 1).toBe(1);
          if (result.body !== undefined) {
            expect(result.body).not.toHaveProperty(n);
            expect(JSON.stringify(result.body)).not.toContain(marker);
          }
        },
      ),
    );
  });

  it("never throws, whatever the template", () => {
    fc.assert(
      fc.property(fc.string(), fc.dictionary(fc.string(), value), (url, params) => {
        expect(() => endpoint({ ...params, url })).not.toThrow();
      }),
    );
  });
});
