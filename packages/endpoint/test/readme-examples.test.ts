import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as undici from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endpoint, VERSION } from "../src/index.js";

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

// A receiver that records each request and answers with a small JSON page.
let server: Server;
let baseUrl: string;
const received: Received[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ items: [], nextCursor: null }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const token = "t0k3n";

describe("README examples", () => {
  it("shows the result of a GET", () => {
    expect(endpoint("GET /rooms/{roomId}/messages", { roomId: 42, limit: 50 })).toEqual({
      method: "get",
      url: "http://localhost:8080/rooms/42/messages?limit=50",
      headers: {
        accept: "application/vnd.parley.v3+json",
        "user-agent": `parley-endpoint/${VERSION}`,
      },
    });
  });

  it("sends a POST with the global fetch", async () => {
    const api = endpoint.defaults({ baseUrl, headers: { authorization: `Bearer ${token}` } });

    const { method, url, headers, body } = api("POST /api/rooms/{roomId}/messages", {
      roomId: 7,
      content: "Deploy finished :rocket:",
    });
    // The README's examples are JavaScript; in TypeScript, fetch's and undici's types want string
    // header values (see the README's Headers note). These examples pass only strings.
    const response = await fetch(url, {
      method,
      headers: headers as Record<string, string>,
      body: body === undefined ? undefined : JSON.stringify(body),
    });

    expect(response.status).toBe(200);
    const request = received.at(-1)!;
    expect(request.method).toBe("POST");
    expect(request.url).toBe("/api/rooms/7/messages");
    expect(request.headers).toMatchObject({
      authorization: "Bearer t0k3n",
      accept: "application/vnd.parley.v3+json",
      "user-agent": `parley-endpoint/${VERSION}`,
      "content-type": "application/json; charset=utf-8",
    });
    expect(JSON.parse(request.body)).toEqual({ content: "Deploy finished :rocket:" });
  });

  it("sends a GET with undici's request", async () => {
    const { request } = undici;
    const api = endpoint.defaults({ baseUrl, headers: { authorization: `Bearer ${token}` } });

    const { method, url, headers, body } = api("GET /api/rooms/{roomId}/messages", { roomId: 7 });
    const { statusCode, body: responseBody } = await request(url, {
      method: method.toUpperCase() as "GET",
      headers: headers as Record<string, string>,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const page = await responseBody.json();

    expect(statusCode).toBe(200);
    expect(page).toEqual({ items: [], nextCursor: null });
    expect(received.at(-1)).toMatchObject({
      method: "GET",
      url: "/api/rooms/7/messages",
      body: "",
    });
  });

  it("sends query parameters and a data body together", async () => {
    const fileBuffer = Buffer.from("hello");
    const { method, url, headers, body } = endpoint(
      `POST ${baseUrl}/rooms/{roomId}/files{?name,label}`,
      {
        roomId: 9,
        name: "notes v1.txt",
        label: "draft",
        data: fileBuffer,
        headers: { "content-type": "text/plain" },
      },
    );
    expect(body).toBe(fileBuffer);
    await fetch(url, { method, headers: headers as Record<string, string>, body: fileBuffer });
    expect(received.at(-1)).toMatchObject({
      method: "POST",
      url: "/rooms/9/files?name=notes%20v1.txt&label=draft",
      body: "hello",
    });
    expect(received.at(-1)!.headers["content-type"]).toBe("text/plain");
  });
});
