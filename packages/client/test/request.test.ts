import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  NetworkError,
  ParleyError,
  RequestError,
  TimeoutError,
  VERSION,
  request,
} from "../src/index.js";
import { sendJson, startTestServer, type TestServer } from "./helpers/test-server.js";

const TOKEN = "eyJhbGciOiJIUzI1NiJ9.secret-token-value.c2lnbmF0dXJl";

describe("request", () => {
  let server: TestServer;
  let api: typeof request;

  beforeAll(async () => {
    server = await startTestServer(async (seen, res) => {
      const path = seen.url.split("?")[0];
      switch (path) {
        case "/json":
          return sendJson(res, 200, { ok: true, query: seen.url.split("?")[1] ?? null });
        case "/created":
          res.writeHead(201, { "content-type": "application/json", "x-request-id": "r-1" });
          return void res.end(seen.body);
        case "/no-content":
          res.writeHead(204);
          return void res.end();
        case "/text":
          res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
          return void res.end("ok");
        case "/bytes":
          res.writeHead(200, { "content-type": "application/octet-stream" });
          return void res.end(Buffer.from([1, 2, 3]));
        case "/problem":
          return sendJson(
            res,
            400,
            {
              type: "https://parley.dev/errors/invalid_secret",
              title: "The secret must be 16 to 1024 characters",
              status: 400,
              detail: "secret is 5 characters; it must be 16 to 1024",
              code: "invalid_secret",
            },
            "application/problem+json",
          );
        case "/plain-error":
          res.writeHead(502, { "content-type": "text/html" });
          return void res.end("<h1>Bad gateway</h1>");
        case "/slow":
          await new Promise((resolve) => setTimeout(resolve, 1000));
          return sendJson(res, 200, {});
        case "/echo":
          return sendJson(res, 200, {
            method: seen.method,
            headers: seen.headers,
            body: seen.body.toString("utf8"),
          });
        default:
          return sendJson(res, 404, { status: 404, code: "route_not_found", title: "No route" });
      }
    });
    api = request.defaults({ baseUrl: server.url, headers: { authorization: `Bearer ${TOKEN}` } });
  });
  afterAll(() => server.close());

  it("parses a JSON answer and gives status, url and lowercased headers", async () => {
    const response = await api("GET /json", { limit: 2 });
    expect(response.status).toBe(200);
    expect(response.url).toBe(`${server.url}/json?limit=2`);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.data).toEqual({ ok: true, query: "limit=2" });
  });

  it("sends other parameters of a POST as a JSON body", async () => {
    const response = await api("POST /created", { name: "ops", events: ["MESSAGE_CREATED"] });
    expect(response.status).toBe(201);
    expect(response.data).toEqual({ name: "ops", events: ["MESSAGE_CREATED"] });
    const seen = server.requests.at(-1)!;
    expect(seen.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(seen.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(seen.headers["user-agent"]).toBe(`parley-client/${VERSION} parley-endpoint/1.0.0`);
    expect(seen.headers.accept).toBe("application/vnd.parley.v3+json");
  });

  it("answers undefined data for 204, a string for text/plain, bytes otherwise", async () => {
    expect((await api("DELETE /no-content")).data).toBeUndefined();
    expect((await api("GET /text")).data).toBe("ok");
    const bytes = (await api("GET /bytes")).data as ArrayBuffer;
    expect([...new Uint8Array(bytes)]).toEqual([1, 2, 3]);
  });

  it("sends PATCH in capitals (fetch upper-cases only some methods)", async () => {
    const { data } = await api("PATCH /echo", { enabled: false });
    expect(data).toMatchObject({ method: "PATCH", body: '{"enabled":false}' });
  });

  it("sends a FormData body as multipart, not as JSON", async () => {
    const form = new FormData();
    form.set("file", new Blob(["hello"], { type: "text/plain" }), "hello.txt");
    const { data } = (await api("POST /echo", { data: form })) as {
      data: { headers: Record<string, string>; body: string };
    };
    expect(data.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(data.body).toContain('filename="hello.txt"');
  });

  it("throws RequestError with status, code, problem and the redacted request", async () => {
    const error = await api("POST /problem", { secret: "short" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestError);
    expect(error).toBeInstanceOf(ParleyError);
    const requestError = error as RequestError;
    expect(requestError.name).toBe("RequestError");
    expect(requestError.status).toBe(400);
    expect(requestError.code).toBe("invalid_secret");
    expect(requestError.problem).toMatchObject({ status: 400, code: "invalid_secret" });
    expect(requestError.message).toBe(
      `POST ${server.url}/problem answered 400 invalid_secret: secret is 5 characters; it must be 16 to 1024`,
    );
    expect(requestError.request.headers.authorization).toBe("Bearer [REDACTED]");
    expect(requestError.request.body).toEqual({ secret: "[REDACTED]" });
    expect(requestError.response.status).toBe(400);
    expect(requestError.response.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });

  it("never puts the token in the error's message, JSON or stack", async () => {
    const error = (await api("POST /problem", { secret: "short" }).catch(
      (e: unknown) => e,
    )) as RequestError;
    const everything = `${error.message}\n${error.stack}\n${JSON.stringify(error)}`;
    expect(everything).not.toContain(TOKEN);
    expect(everything).not.toContain("short");
    expect(JSON.stringify(error)).toContain("[REDACTED]");
  });

  it("leaves the caller's options untouched when it redacts", async () => {
    const headers = { authorization: `Bearer ${TOKEN}` };
    await api("GET /problem", { headers }).catch(() => undefined);
    expect(headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("throws RequestError without a code for an answer that is no problem", async () => {
    const error = (await api("GET /plain-error").catch((e: unknown) => e)) as RequestError;
    expect(error).toBeInstanceOf(RequestError);
    expect(error.status).toBe(502);
    expect(error.code).toBeUndefined();
    expect(error.problem).toBeUndefined();
    expect(error.response.data).toBe("<h1>Bad gateway</h1>");
    expect(error.message).toBe(`GET ${server.url}/plain-error answered 502`);
  });

  it("redacts an ingest token from the url of an error", async () => {
    const ingestToken = "Zm9vYmFyYmF6cXV4cXV1eGZvb2JhcmJhenF1eHF1dXg";
    const error = (await api("POST /api/public/webhooks/ingest/{token}", {
      token: ingestToken,
      content: "hi",
    }).catch((e: unknown) => e)) as RequestError;
    expect(error.status).toBe(404);
    expect(error.request.url).toBe(`${server.url}/api/public/webhooks/ingest/[REDACTED]`);
    expect(`${error.message}${JSON.stringify(error)}`).not.toContain(ingestToken);
  });

  it("throws NetworkError with the cause kept when nothing answers", async () => {
    const closed = await startTestServer(() => undefined);
    await closed.close();
    const error = (await api("GET /json", { baseUrl: closed.url }).catch(
      (e: unknown) => e,
    )) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toBeInstanceOf(ParleyError);
    expect(error.message).toMatch(new RegExp(`^GET ${closed.url}/json failed: .*ECONNREFUSED`));
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.request.headers.authorization).toBe("Bearer [REDACTED]");
    expect(`${error.message}${JSON.stringify(error)}`).not.toContain(TOKEN);
  });

  it("throws TimeoutError after request.timeout", async () => {
    const error = await api("GET /slow", { request: { timeout: 50 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as TimeoutError).message).toContain("no answer within 50 ms");
  });

  it("rethrows the caller's abort reason as it is", async () => {
    const controller = new AbortController();
    const pending = api("GET /slow", { request: { signal: controller.signal } });
    controller.abort(new Error("stopped by the caller"));
    await expect(pending).rejects.toThrow("stopped by the caller");
  });

  it("uses a custom fetch passed as request.fetch, through defaults too", async () => {
    const calls: string[] = [];
    const withFetch = api.defaults({
      request: {
        fetch: async (url: string, init: RequestInit) => {
          calls.push(`${init.method} ${url}`);
          return new Response(JSON.stringify({ stubbed: true }), {
            status: 200,
            headers: { "content-type": "application/json" },
          });
        },
      },
    });
    const { data } = await withFetch("GET /api/admin/webhooks", { limit: 5 });
    expect(data).toEqual({ stubbed: true });
    expect(calls).toEqual([`GET ${server.url}/api/admin/webhooks?limit=5`]);
  });

  it("sends header values that endpoint() keeps as numbers or booleans as their text", async () => {
    const seen: Array<Record<string, string>> = [];
    const withFetch = api.defaults({
      request: {
        fetch: async (_url: string, init: RequestInit) => {
          seen.push(init.headers as Record<string, string>);
          return new Response(null, { status: 204 });
        },
      },
    });
    await withFetch("GET /json", { headers: { "x-retry-count": 3, "x-dry-run": true } });
    expect(seen[0]).toMatchObject({ "x-retry-count": "3", "x-dry-run": "true" });
  });

  it("cascades defaults and exposes the bound endpoint", async () => {
    const bound = api.defaults({ headers: { "x-trace": "a" } }).defaults({ limit: 7 });
    expect(bound.endpoint.DEFAULTS.baseUrl).toBe(server.url);
    expect(bound.endpoint.DEFAULTS.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(bound.endpoint("GET /json")).toMatchObject({
      method: "get",
      url: `${server.url}/json?limit=7`,
      headers: { "x-trace": "a" },
    });
    const { data } = await bound("GET /json");
    expect(data).toEqual({ ok: true, query: "limit=7" });
    expect(request.endpoint.DEFAULTS.baseUrl).toBe("http://localhost:8080");
  });

  it("accepts the options-only form", async () => {
    const { data } = await api({ method: "GET", url: "/text" });
    expect(data).toBe("ok");
  });
});
