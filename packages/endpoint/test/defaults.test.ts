import { describe, expect, it } from "vitest";
import { endpoint, VERSION } from "../src/index.js";

const ACCEPT = "application/vnd.parley.v3+json";
const USER_AGENT = `parley-endpoint/${VERSION}`;

describe("DEFAULTS", () => {
  it("holds the global defaults", () => {
    expect(endpoint.DEFAULTS).toEqual({
      method: "get",
      baseUrl: "http://localhost:8080",
      headers: { accept: ACCEPT, "user-agent": USER_AGENT },
      mediaType: { format: "", previews: [] },
    });
  });

  it("holds the overriding baseUrl on a function made by .defaults()", () => {
    const bound = endpoint.defaults({ baseUrl: "https://chat.example.com" });
    expect(bound.DEFAULTS.baseUrl).toBe("https://chat.example.com");
    expect(endpoint.DEFAULTS.baseUrl).toBe("http://localhost:8080");
  });

  it("is frozen, so nobody can change the defaults in effect", () => {
    expect(Object.isFrozen(endpoint.DEFAULTS)).toBe(true);
    expect(Object.isFrozen(endpoint.DEFAULTS.headers)).toBe(true);
    expect(Object.isFrozen(endpoint.DEFAULTS.mediaType.previews)).toBe(true);
  });

  it("is a copy, so changing the object given to .defaults() later changes nothing", () => {
    const given = { labels: ["a"], headers: { authorization: "t1" } };
    const bound = endpoint.defaults(given);
    given.labels.push("b");
    given.headers.authorization = "t2";
    const result = bound("POST /x");
    expect(result.body).toEqual({ labels: ["a"] });
    expect(result.headers.authorization).toBe("t1");
  });
});

describe(".defaults()", () => {
  it("applies its defaults on top of the global ones", () => {
    const bound = endpoint.defaults({ headers: { authorization: "token t" }, org: "parley" });
    expect(bound("GET /rooms")).toEqual({
      method: "get",
      url: "http://localhost:8080/rooms?org=parley",
      headers: { accept: ACCEPT, "user-agent": USER_AGENT, authorization: "token t" },
    });
  });

  it("cascades: earlier defaults stay, later ones add or override", () => {
    const first = endpoint.defaults({
      baseUrl: "https://a.example.com",
      headers: { authorization: "token one", "x-a": "1" },
      per_page: 30,
      org: "parley",
    });
    const second = first.defaults({ headers: { Authorization: "token two" }, per_page: 100 });
    expect(second.DEFAULTS).toEqual({
      method: "get",
      baseUrl: "https://a.example.com",
      headers: { accept: ACCEPT, "user-agent": USER_AGENT, authorization: "token two", "x-a": "1" },
      mediaType: { format: "", previews: [] },
      per_page: 100,
      org: "parley",
    });
    expect(second("GET /rooms").url).toBe("https://a.example.com/rooms?per_page=100&org=parley");
    expect(first("GET /rooms").url).toBe("https://a.example.com/rooms?per_page=30&org=parley");
  });

  it("merges previews across layers", () => {
    const bound = endpoint
      .defaults({ mediaType: { previews: ["mercy-preview"] } })
      .defaults({ mediaType: { previews: ["symmetra", "mercy"], format: "raw" } });
    expect(bound.DEFAULTS.mediaType).toEqual({ format: "raw", previews: ["mercy", "symmetra"] });
  });

  it("lets a call override a default url placeholder value", () => {
    const bound = endpoint.defaults({ url: "/orgs/{org}/rooms", org: "parley" });
    expect(bound({}).url).toBe("http://localhost:8080/orgs/parley/rooms");
    expect(bound({ org: "other" }).url).toBe("http://localhost:8080/orgs/other/rooms");
  });
});

describe(".merge()", () => {
  it("returns merged options with placeholders kept", () => {
    const bound = endpoint.defaults({ headers: { authorization: "t" }, org: "parley" });
    expect(
      bound.merge("POST /orgs/{org}/rooms/:roomId", {
        roomId: 3,
        name: "general",
        headers: { "X-Trace": "1" },
        mediaType: { format: "raw" },
      }),
    ).toEqual({
      method: "post",
      baseUrl: "http://localhost:8080",
      url: "/orgs/{org}/rooms/:roomId",
      headers: { accept: ACCEPT, "user-agent": USER_AGENT, authorization: "t", "x-trace": "1" },
      mediaType: { format: "raw", previews: [] },
      org: "parley",
      roomId: 3,
      name: "general",
    });
  });

  it("accepts options alone", () => {
    expect(endpoint.merge({ method: "PATCH", url: "/x", a: 1 })).toMatchObject({
      method: "patch",
      url: "/x",
      a: 1,
    });
  });

  it("returns fresh headers and mediaType objects", () => {
    const merged = endpoint.merge("GET /");
    expect(merged.headers).not.toBe(endpoint.DEFAULTS.headers);
    expect(merged.mediaType.previews).not.toBe(endpoint.DEFAULTS.mediaType.previews);
    merged.headers.accept = "text/html";
    merged.mediaType.previews.push("mercy");
    expect(endpoint("GET /").headers.accept).toBe(ACCEPT);
  });
});

describe(".parse()", () => {
  it("is stateless: it ignores the defaults of the function it is read from", () => {
    const bound = endpoint.defaults({ baseUrl: "https://other.example.com", org: "x" });
    const options = {
      method: "GET",
      baseUrl: "https://api.example.com",
      url: "/rooms/{id}",
      headers: { Accept: "application/json" },
      mediaType: { format: "", previews: [] },
      id: 2,
    };
    expect(bound.parse(options)).toEqual(endpoint.parse(options));
    expect(bound.parse(options)).toEqual({
      method: "get",
      url: "https://api.example.com/rooms/2",
      headers: { accept: "application/json" },
    });
  });

  it("turns merged options into the same result as endpoint()", () => {
    const args = ["PUT /rooms/{id}", { id: 1, name: "n", mediaType: { format: "raw" } }] as const;
    expect(endpoint.parse(endpoint.merge(...args))).toEqual(endpoint(...args));
  });
});
