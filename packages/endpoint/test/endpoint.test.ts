import { describe, expect, it } from "vitest";
import { endpoint, VERSION } from "../src/index.js";

const ACCEPT = "application/vnd.parley.v3+json";
const USER_AGENT = `parley-endpoint/${VERSION}`;

describe("endpoint(route, options): input", () => {
  it("reads method and url from the route", () => {
    const { method, url } = endpoint("POST /rooms", { name: "general" });
    expect([method, url]).toEqual(["post", "http://localhost:8080/rooms"]);
  });

  it("defaults a lone url to GET", () => {
    expect(endpoint("/rooms").method).toBe("get");
  });

  it("takes a lone url's method from .defaults()", () => {
    expect(endpoint.defaults({ method: "PUT" })("/rooms/1").method).toBe("put");
  });

  it("accepts options alone, with method and url", () => {
    expect(endpoint({ method: "DELETE", url: "/rooms/{id}", id: 4 })).toEqual({
      method: "delete",
      url: "http://localhost:8080/rooms/4",
      headers: { accept: ACCEPT, "user-agent": USER_AGENT },
    });
  });

  it.each(["GET", "get", "Get"])("lowercases the method %s", (method) => {
    expect(endpoint(`${method} /x`).method).toBe("get");
    expect(endpoint({ method, url: "/x" }).method).toBe("get");
  });

  it("lets options.method and options.url override the route's", () => {
    const { method, url } = endpoint("GET /a", { method: "PATCH", url: "/b" });
    expect([method, url]).toEqual(["patch", "http://localhost:8080/b"]);
  });

  it("tolerates extra whitespace in the route", () => {
    expect(endpoint("  POST   /rooms ").url).toBe("http://localhost:8080/rooms");
  });

  it("uses / when no url is given at all", () => {
    expect(endpoint({}).url).toBe("http://localhost:8080/");
  });

  it("prefixes a relative url with baseUrl", () => {
    expect(endpoint("GET /x", { baseUrl: "https://chat.example.com/api" }).url).toBe(
      "https://chat.example.com/api/x",
    );
  });

  it("joins baseUrl and url with a single slash", () => {
    expect(endpoint("GET /x", { baseUrl: "https://chat.example.com/api/" }).url).toBe(
      "https://chat.example.com/api/x",
    );
  });

  it("keeps an absolute url", () => {
    expect(endpoint("GET https://files.example.com/f/{id}", { id: 1 }).url).toBe(
      "https://files.example.com/f/1",
    );
  });

  it("keeps a url that a {+var} expands to an absolute one", () => {
    expect(endpoint("GET {+next}", { next: "https://x.example.com/p?page=2" }).url).toBe(
      "https://x.example.com/p?page=2",
    );
  });

  it("fills {name} and :name placeholders", () => {
    expect(
      endpoint("GET /rooms/{roomId}/messages/:messageId", { roomId: 1, messageId: 2 }).url,
    ).toBe("http://localhost:8080/rooms/1/messages/2");
  });

  it("expands a missing :name value to nothing", () => {
    expect(endpoint("GET /repos/:owner/:repo", { owner: "parley" }).url).toBe(
      "http://localhost:8080/repos/parley/",
    );
  });

  it("expands level 4 templates in the url", () => {
    expect(
      endpoint("GET /files{/path*}{?fields}", { path: ["a b", "c"], fields: ["x", "y"] }).url,
    ).toBe("http://localhost:8080/files/a%20b/c?fields=x,y");
  });

  it("leaves an invalid expression in the url and does not throw", () => {
    expect(endpoint("GET /a/{b c}/{d}", { d: 1 }).url).toBe("http://localhost:8080/a/{b c}/1");
  });
});

describe("headers", () => {
  it("sends the default accept and user-agent", () => {
    expect(endpoint("GET /").headers).toEqual({ accept: ACCEPT, "user-agent": USER_AGENT });
  });

  it("names the released version in the user-agent", () => {
    expect(endpoint("GET /").headers["user-agent"]).toBe("parley-endpoint/1.0.0");
  });

  it("lowercases header names before merging, so no duplicates remain", () => {
    const { headers } = endpoint("GET /", {
      headers: { Accept: "text/html", "User-Agent": "bot/1", Authorization: "Bearer t" },
    });
    expect(headers).toEqual({
      accept: "text/html",
      "user-agent": "bot/1",
      authorization: "Bearer t",
    });
  });

  it("passes credentials through unchanged", () => {
    expect(
      endpoint("GET /", { headers: { authorization: "token abc" } }).headers.authorization,
    ).toBe("token abc");
  });

  // As @octokit/endpoint 11 does: only names are changed (lowercased), never values.
  it("keeps header values as given: a number stays a number", () => {
    const { headers } = endpoint("POST /x", {
      headers: { "content-length": 14, "X-Count": 3, "x-dry-run": true },
    });
    expect(headers["content-length"]).toBe(14);
    expect(headers["x-count"]).toBe(3);
    expect(headers["x-dry-run"]).toBe(true);
  });

  it("keeps header values from .defaults() as given", () => {
    const bound = endpoint.defaults({ headers: { "X-Retry-Limit": 5 } });
    expect(bound("GET /").headers["x-retry-limit"]).toBe(5);
    expect(endpoint.parse(bound.merge("GET /")).headers["x-retry-limit"]).toBe(5);
  });

  it("drops a header whose value is null, overriding its default", () => {
    expect(endpoint("GET /", { headers: { "user-agent": null } }).headers).toEqual({
      accept: ACCEPT,
    });
  });
});

describe("mediaType.format", () => {
  it.each([
    ["raw", "application/vnd.parley.v3.raw"],
    ["text+json", "application/vnd.parley.v3.text+json"],
    ["diff", "application/vnd.parley.v3.diff"],
  ])("amends the vendor accept with %s", (format, accept) => {
    expect(endpoint("GET /", { mediaType: { format } }).headers.accept).toBe(accept);
  });

  it("replaces a format already in the accept header", () => {
    const { headers } = endpoint("GET /", {
      headers: { accept: "application/vnd.parley.v3.html+json" },
      mediaType: { format: "raw" },
    });
    expect(headers.accept).toBe("application/vnd.parley.v3.raw");
  });

  it("amends each vendor entry and leaves the others alone", () => {
    const { headers } = endpoint("GET /", {
      headers: { accept: "application/vnd.parley.v3+json, text/html,application/json" },
      mediaType: { format: "raw" },
    });
    expect(headers.accept).toBe("application/vnd.parley.v3.raw, text/html,application/json");
  });

  it("leaves application/octet-stream alone", () => {
    const { headers } = endpoint("GET /", {
      headers: { accept: "application/octet-stream" },
      mediaType: { format: "raw", previews: ["mercy"] },
    });
    expect(headers.accept).toBe("application/octet-stream");
  });

  it("keeps the vendor of a caller's accept header", () => {
    const { headers } = endpoint("GET /", {
      headers: { accept: "application/vnd.github.v3+json" },
      mediaType: { format: "diff" },
    });
    expect(headers.accept).toBe("application/vnd.github.v3.diff");
  });
});

describe("mediaType.previews", () => {
  it.each(["/rooms", "/graphql", "https://elsewhere.example.com/x"])(
    "sets preview accept entries on %s",
    (url) => {
      expect(
        endpoint("GET " + url, { mediaType: { previews: ["mercy", "symmetra"] } }).headers.accept,
      ).toBe(
        "application/vnd.parley.mercy-preview+json,application/vnd.parley.symmetra-preview+json",
      );
    },
  );

  it("uses the format in preview entries", () => {
    expect(
      endpoint("GET /", { mediaType: { previews: ["mercy"], format: "raw" } }).headers.accept,
    ).toBe("application/vnd.parley.mercy-preview.raw");
  });

  it("takes the vendor from the accept header in effect", () => {
    const github = endpoint.defaults({ headers: { accept: "application/vnd.github.v3+json" } });
    expect(github("GET /", { mediaType: { previews: ["mercy"] } }).headers.accept).toBe(
      "application/vnd.github.mercy-preview+json",
    );
  });

  it("strips a trailing -preview and removes duplicates", () => {
    const { headers } = endpoint("GET /", {
      mediaType: { previews: ["mercy-preview", "mercy", "scarlet-witch-preview"] },
    });
    expect(headers.accept).toBe(
      "application/vnd.parley.mercy-preview+json,application/vnd.parley.scarlet-witch-preview+json",
    );
  });

  it("merges previews from .defaults() with the call's", () => {
    const withMercy = endpoint.defaults({ mediaType: { previews: ["mercy"] } });
    const { headers } = withMercy("GET /", { mediaType: { previews: ["symmetra", "mercy"] } });
    expect(headers.accept).toBe(
      "application/vnd.parley.mercy-preview+json,application/vnd.parley.symmetra-preview+json",
    );
  });

  it("keeps previews already named in the accept header", () => {
    const { headers } = endpoint("GET /", {
      headers: { accept: "application/vnd.parley.mercy-preview+json" },
      mediaType: { previews: ["symmetra"] },
    });
    expect(headers.accept).toBe(
      "application/vnd.parley.mercy-preview+json,application/vnd.parley.symmetra-preview+json",
    );
  });
});

describe("routing of other keys", () => {
  it("sends GET parameters as the query, in insertion order", () => {
    expect(endpoint("GET /rooms", { limit: 10, cursor: "abc", archived: false }).url).toBe(
      "http://localhost:8080/rooms?limit=10&cursor=abc&archived=false",
    );
  });

  it("sends HEAD parameters as the query", () => {
    expect(endpoint("HEAD /rooms", { limit: 10 }).url).toBe("http://localhost:8080/rooms?limit=10");
  });

  it("puts the defaults' query parameters first", () => {
    const paged = endpoint.defaults({ per_page: 100, org: "parley" });
    expect(paged("GET /rooms", { cursor: "c", org: "other" }).url).toBe(
      "http://localhost:8080/rooms?per_page=100&org=other&cursor=c",
    );
  });

  it("percent-encodes query names and values per RFC 3986", () => {
    expect(endpoint("GET /s", { "a b": "x&y=z/é!" }).url).toBe(
      "http://localhost:8080/s?a%20b=x%26y%3Dz%2F%C3%A9%21",
    );
  });

  it("comma-joins arrays in the query", () => {
    expect(endpoint("GET /s", { labels: ["bug", "help wanted"] }).url).toBe(
      "http://localhost:8080/s?labels=bug,help%20wanted",
    );
  });

  it("keeps the + separators of q and encodes each term", () => {
    expect(endpoint("GET /search", { q: "is:open+label:bug fix" }).url).toBe(
      "http://localhost:8080/search?q=is%3Aopen+label%3Abug%20fix",
    );
  });

  it("appends to a query the url already has", () => {
    expect(endpoint("GET /s?fixed=1", { page: 2 }).url).toBe(
      "http://localhost:8080/s?fixed=1&page=2",
    );
  });

  it("places the query before a fragment", () => {
    expect(endpoint("GET /s#top", { page: 2 }).url).toBe("http://localhost:8080/s?page=2#top");
  });

  it("leaves a null or empty-list parameter out of the query", () => {
    expect(endpoint("GET /s", { a: null, b: [], c: 1 }).url).toBe("http://localhost:8080/s?c=1");
  });

  it.each(["POST", "PUT", "PATCH", "DELETE"])("sends %s parameters as a JSON body", (method) => {
    const result = endpoint(`${method} /rooms/{id}`, { id: 1, name: "general", topic: null });
    expect(result.url).toBe("http://localhost:8080/rooms/1");
    expect(result.body).toEqual({ name: "general", topic: null });
    expect(result.headers["content-type"]).toBe("application/json; charset=utf-8");
  });

  it("sends parameters of other methods without a body as the query", () => {
    const result = endpoint("OPTIONS /rooms", { verbose: 1 });
    expect(result.url).toBe("http://localhost:8080/rooms?verbose=1");
    expect(result).not.toHaveProperty("body");
  });

  it("never sends a placeholder's value in the query or body", () => {
    expect(endpoint("GET /rooms/{id}", { id: 1 }).url).toBe("http://localhost:8080/rooms/1");
    expect(endpoint("POST /rooms/:id", { id: 1, a: 2 }).body).toEqual({ a: 2 });
  });

  it("does not treat option keys as placeholders", () => {
    expect(endpoint("GET /x/{url}/{method}", {}).url).toBe("http://localhost:8080/x//");
  });

  it("keeps a __proto__ parameter as an ordinary body key", () => {
    const options = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const body = endpoint("POST /x", options).body as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
  });
});

describe("body", () => {
  it("is absent without parameters", () => {
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
      const result = endpoint(`${method} /x`);
      expect(result).not.toHaveProperty("body");
      expect(result.headers).not.toHaveProperty("content-type");
    }
  });

  it("keeps a caller's content-type", () => {
    expect(
      endpoint("POST /x", { a: 1, headers: { "Content-Type": "text/plain" } }).headers[
        "content-type"
      ],
    ).toBe("text/plain");
  });

  it("sends no content-type when the caller set it to null", () => {
    expect(
      endpoint("POST /x", { a: 1, headers: { "content-type": null } }).headers,
    ).not.toHaveProperty("content-type");
  });
});

describe("special case: data", () => {
  it("becomes the body unchanged, and other parameters are not added", () => {
    const data = new Uint8Array([1, 2, 3]);
    const result = endpoint("POST /rooms/{id}/files", { id: 1, data, name: "ignored" });
    expect(result.body).toBe(data);
    expect(result.url).toBe("http://localhost:8080/rooms/1/files");
  });

  it("gets the JSON content-type only when the caller set none", () => {
    expect(endpoint("POST /x", { data: "{}" }).headers["content-type"]).toBe(
      "application/json; charset=utf-8",
    );
    expect(
      endpoint("POST /x", {
        data: "raw",
        headers: { "content-type": "text/plain", accept: "text/plain" },
      }).headers,
    ).toEqual({ accept: "text/plain", "user-agent": USER_AGENT, "content-type": "text/plain" });
  });

  it("may be null", () => {
    expect(endpoint("PUT /x", { data: null })).toHaveProperty("body", null);
  });
});

describe("special case: parameters for both query and body", () => {
  it("sends {?name,label} parameters in the query and data as the body", () => {
    const data = Buffer.from("file contents");
    const result = endpoint("POST https://uploads.example.com/rooms/{roomId}/files{?name,label}", {
      roomId: 9,
      name: "notes v1.txt",
      label: "draft",
      data,
      headers: { "content-type": "text/plain" },
    });
    expect(result).toEqual({
      method: "post",
      url: "https://uploads.example.com/rooms/9/files?name=notes%20v1.txt&label=draft",
      headers: { accept: ACCEPT, "user-agent": USER_AGENT, "content-type": "text/plain" },
      body: data,
    });
  });
});

describe("request", () => {
  it("is returned exactly as passed", () => {
    const request = { timeout: 100, signal: new AbortController().signal };
    expect(endpoint("GET /", { request }).request).toBe(request);
  });

  it("is absent when not passed", () => {
    expect(endpoint("GET /")).not.toHaveProperty("request");
  });

  it("merges the call's request options over the defaults'", () => {
    const fetch = (): void => undefined;
    const bound = endpoint.defaults({ request: { fetch, timeout: 5 } });
    expect(bound("GET /", { request: { timeout: 10 } }).request).toEqual({ fetch, timeout: 10 });
  });
});

describe("undefined and null", () => {
  it("drops undefined keys, so they never override a default", () => {
    const bound = endpoint.defaults({ org: "parley", headers: { authorization: "t" } });
    const result = bound("GET /", {
      org: undefined,
      method: undefined,
      headers: { authorization: undefined },
      mediaType: { format: undefined },
    });
    expect(result.url).toBe("http://localhost:8080/?org=parley");
    expect(result.headers.authorization).toBe("t");
  });

  it("lets null override a default", () => {
    const bound = endpoint.defaults({ topic: "x" });
    expect(bound("PATCH /rooms/1", { topic: null }).body).toEqual({ topic: null });
    expect(bound("GET /rooms", { topic: null }).url).toBe("http://localhost:8080/rooms");
  });
});

describe("inputs that are not what the types say", () => {
  it("ignores an explicit undefined data, building the body from the other parameters", () => {
    expect(endpoint("POST /x", { data: undefined, a: 1 }).body).toEqual({ a: 1 });
    expect(endpoint.parse({ method: "post", url: "/x", data: undefined, a: 1 }).body).toEqual({
      a: 1,
    });
  });

  it("ignores a non-string format", () => {
    const options = { mediaType: { format: 3 as unknown as string } };
    expect(endpoint("GET /", options).headers.accept).toBe(ACCEPT);
  });

  it("ignores preview names that are not strings", () => {
    const previews = ["mercy", 7, null] as unknown as string[];
    expect(endpoint("GET /", { mediaType: { previews } }).headers.accept).toBe(
      "application/vnd.parley.mercy-preview+json",
    );
  });

  it("reads only own properties of the options", () => {
    const options = Object.create({ url: "/inherited", secret: "x" }) as Record<string, unknown>;
    options.id = 1;
    expect(endpoint("GET /items", options).url).toBe("http://localhost:8080/items?id=1");
  });

  it("treats a missing method, url or options as GET /", () => {
    const untyped = endpoint as unknown as (...args: unknown[]) => unknown;
    expect(untyped()).toEqual(endpoint("GET /"));
    expect(untyped(null)).toEqual(endpoint("GET /"));
  });
});
