import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ParleyError, paginate, request } from "../src/index.js";
import { sendJson, startTestServer, type TestServer } from "./helpers/test-server.js";

const ITEMS = Array.from({ length: 7 }, (_, i) => ({ id: i + 1 }));

describe("paginate", () => {
  let server: TestServer;
  let api: typeof request;

  beforeAll(async () => {
    // A list of 7 items, `limit` per page; the cursor is the last id seen.
    server = await startTestServer((seen, res) => {
      const url = new URL(seen.url, "http://x");
      if (url.pathname === "/loop") return sendJson(res, 200, { items: [1], nextCursor: "same" });
      if (url.pathname === "/not-a-list") return sendJson(res, 200, [1, 2]);
      const limit = Number(url.searchParams.get("limit") ?? 50);
      const after = Number(url.searchParams.get("cursor") ?? 0);
      const page = ITEMS.filter((item) => item.id > after).slice(0, limit);
      const last = page.at(-1);
      const more = last !== undefined && last.id < ITEMS.length;
      sendJson(res, 200, { items: page, nextCursor: more ? String(last.id) : null });
    });
    api = request.defaults({ baseUrl: server.url });
  });
  afterAll(() => server.close());

  it("follows nextCursor page by page, sending the other parameters each time", async () => {
    const pages = [];
    for await (const page of paginate(api, "GET /items", { limit: 3, filter: "x" }))
      pages.push(page);
    expect(pages.map((page) => page.items)).toEqual([
      ITEMS.slice(0, 3),
      ITEMS.slice(3, 6),
      ITEMS.slice(6),
    ]);
    expect(pages.map((page) => page.nextCursor)).toEqual(["3", "6", null]);
    expect(server.requests.slice(-3).map((r) => r.url)).toEqual([
      "/items?limit=3&filter=x",
      "/items?limit=3&filter=x&cursor=3",
      "/items?limit=3&filter=x&cursor=6",
    ]);
  });

  it("yields items one by one and fetches no further than the loop asks", async () => {
    const before = server.requests.length;
    const seen = [];
    for await (const item of paginate.items(api, "GET /items", { limit: 2 })) {
      seen.push(item);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual(ITEMS.slice(0, 3));
    expect(server.requests.length - before).toBe(2);
  });

  it("collects every item with all()", async () => {
    expect(await paginate.all(api, "GET /items", { limit: 2 })).toEqual(ITEMS);
    expect(await paginate.all(api, "GET /items")).toEqual(ITEMS);
  });

  it("starts from a given cursor", async () => {
    expect(await paginate.all(api, "GET /items", { limit: 2, cursor: "4" })).toEqual(
      ITEMS.slice(4),
    );
  });

  it("fails on an answer that is no list, and on a cursor handed out twice", async () => {
    await expect(paginate.all(api, "GET /not-a-list")).rejects.toThrow(ParleyError);
    await expect(paginate.all(api, "GET /loop")).rejects.toThrow("repeated a cursor");
  });
});
