import { createHmac } from "node:crypto";
import { once } from "node:events";
import http from "node:http";
import net, { type AddressInfo, type LookupFunction } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { signPayload } from "../../../../../src/webhooks/outbound/delivery-engine/sign-payload.js";
import {
  createWebhookSender,
  type SenderOptions,
  type WebhookSender,
} from "../../../../../src/webhooks/outbound/transport/webhook-sender.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";

const SECRET = "whsec_sender_test_secret_value";
const BODY = Buffer.from(
  JSON.stringify({
    event: "WEBHOOK_TEST",
    timestamp: "2026-11-22T10:00:00.000Z",
    webhookId: 7,
    data: { message: "Grüße — 你好 🎉", requestedBy: "admin" },
  }),
);
const SIGNATURE = signPayload(SECRET, BODY);
const SIGNATURE_HEX = SIGNATURE.slice("sha256=".length);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(options?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const started = await startReceiver(options);
  cleanups.push(() => started.close());
  return started;
}

function sender(options: Partial<SenderOptions> = {}): WebhookSender {
  const created = createWebhookSender({
    timeoutMs: 5_000,
    allowPrivateNetworks: true,
    allowHttp: true,
    ...options,
  });
  cleanups.push(() => created.close());
  return created;
}

/** A plain server for answers the receiver helper cannot script (stalls, endless bodies). */
async function rawServer(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function fixedLookup(addresses: string[], calls: string[] = []): LookupFunction {
  return (hostname, options, callback) => {
    calls.push(hostname);
    const all = addresses.map((address) => ({ address, family: net.isIP(address) }));
    if (options.all) callback(null, all);
    else callback(null, all[0]!.address, all[0]!.family);
  };
}

const send = (target: WebhookSender, url: string) =>
  target.send({ url, body: BODY, signature: SIGNATURE });

describe("webhook sender: the request", () => {
  it("sends exactly the documented headers, the body bytes unchanged, and a signature that verifies", async () => {
    const hook = await receiver();
    const outcome = await send(sender(), hook.url);

    expect(outcome).toMatchObject({ ok: true, responseStatus: 204, responseBody: "", error: null });
    const [request] = await hook.waitForRequests(1);
    expect(request!.method).toBe("POST");
    expect(request!.path).toBe("/hook");
    const names = request!.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(names.sort()).toEqual(
      [
        "connection",
        "content-length",
        "content-type",
        "host",
        "user-agent",
        "x-webhook-signature-256",
      ].sort(),
    );
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["user-agent"]).toBe("Parley-Webhooks/1.0");
    expect(request!.headers["content-length"]).toBe(String(BODY.length));
    expect(request!.headers["x-webhook-signature-256"]).toBe(SIGNATURE);
    expect(request!.body.equals(BODY)).toBe(true);

    const expected = createHmac("sha256", SECRET).update(request!.body).digest("hex");
    expect(request!.headers["x-webhook-signature-256"]).toBe(`sha256=${expected}`);
  });

  it("reuses one keep-alive connection for consecutive sends to the same origin", async () => {
    const hook = await receiver();
    const target = sender();
    expect((await send(target, hook.url)).ok).toBe(true);
    expect((await send(target, hook.url)).ok).toBe(true);

    const requests = await hook.waitForRequests(2);
    expect(requests[0]!.connectionId).toBe(requests[1]!.connectionId);
    expect(hook.connectionCount).toBe(1);
    expect(requests[0]!.headers.connection).toBe("keep-alive");
  });

  it("queues sends beyond connectionsPerOrigin instead of opening more connections", async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ status: 200, delayMs: 50 }));
    const target = sender({ connectionsPerOrigin: 1 });
    const outcomes = await Promise.all([1, 2, 3].map(() => send(target, hook.url)));

    expect(outcomes.map((o) => o.ok)).toEqual([true, true, true]);
    expect(hook.connectionCount).toBe(1);
  });

  it("reaches an IPv6 loopback receiver by its bracketed address", async () => {
    const hook = await receiver({ host: "::1" });
    expect(hook.url).toMatch(/^http:\/\/\[::1\]:\d+\/hook$/);
    expect((await send(sender(), hook.url)).ok).toBe(true);
  });

  it("uses a configured user agent", async () => {
    const hook = await receiver();
    await send(sender({ userAgent: "Parley-Webhooks/1.0 (staging)" }), hook.url);
    const [request] = await hook.waitForRequests(1);
    expect(request!.headers["user-agent"]).toBe("Parley-Webhooks/1.0 (staging)");
  });

  it("records when the attempt started and how long it took", async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ status: 200, delayMs: 150 }));
    const before = Date.now();
    const outcome = await send(sender(), hook.url);

    expect(outcome.startedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(outcome.startedAt.getTime()).toBeLessThanOrEqual(before + 500);
    expect(outcome.durationMs).toBeGreaterThanOrEqual(140);
    expect(outcome.durationMs).toBeLessThan(2_000);
  });
});

describe("webhook sender: HTTPS", () => {
  it("delivers to a receiver whose certificate is trusted through ca", async () => {
    const hook = await receiver({ tls: true });
    expect(hook.url).toMatch(/^https:\/\/localhost:\d+\/hook$/);
    const outcome = await send(sender({ ca: hook.caPem }), hook.url);

    expect(outcome).toMatchObject({ ok: true, responseStatus: 204, error: null });
    expect((await hook.waitForRequests(1))[0]!.body.equals(BODY)).toBe(true);
  });

  it("fails with a TLS error when the certificate is not trusted", async () => {
    const hook = await receiver({ tls: true });
    const outcome = await send(sender(), hook.url);

    expect(outcome).toMatchObject({ ok: false, responseStatus: null, responseBody: null });
    expect(outcome.error).toBe("TLS error: self-signed certificate");
    expect(hook.requests).toHaveLength(0);
  });

  it("checks the certificate against the host name, not the address the lookup pinned", async () => {
    const hook = await receiver({ tls: true });
    const calls: string[] = [];
    const target = sender({ ca: hook.caPem, lookup: fixedLookup(["127.0.0.1"], calls) });

    expect((await send(target, `https://localhost:${hook.port}/hook`)).ok).toBe(true);
    const outcome = await send(target, `https://not-in-the-cert.test:${hook.port}/hook`);
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(/^TLS error: Hostname\/IP does not match certificate's altnames/);
    expect(calls).toEqual(["localhost", "not-in-the-cert.test"]);
  });
});

describe("webhook sender: answers that count as failures", () => {
  it("counts a 500 as a failed attempt and keeps its status and body", async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ status: 500, body: "database unavailable" }));
    const outcome = await send(sender(), hook.url);

    expect(outcome).toMatchObject({
      ok: false,
      responseStatus: 500,
      responseBody: "database unavailable",
      error: "receiver answered HTTP 500",
    });
  });

  it("counts a 302 as a failed attempt and does not follow it", async () => {
    const elsewhere = await receiver();
    const hook = await receiver();
    hook.respondWith(() => ({ status: 302, headers: { location: elsewhere.url }, body: "moved" }));
    const outcome = await send(sender(), hook.url);

    expect(outcome).toMatchObject({ ok: false, responseStatus: 302, responseBody: "moved" });
    expect(outcome.error).toBe("receiver answered HTTP 302; redirects are not followed");
    // The outcome is the sender's last word: a followed redirect would have been sent before it.
    expect(elsewhere.requests).toHaveLength(0);
    expect(elsewhere.connectionCount).toBe(0);
  });

  it.each([200, 201, 202, 204, 299])("counts a %i as a success", async (status) => {
    const hook = await receiver();
    hook.respondWith(() => ({ status }));
    expect((await send(sender(), hook.url)).ok).toBe(true);
  });

  it.each([304, 400, 404, 410, 429, 503])("counts a %i as a failure", async (status) => {
    const hook = await receiver();
    hook.respondWith(() => ({ status }));
    const outcome = await send(sender(), hook.url);
    expect(outcome).toMatchObject({ ok: false, responseStatus: status });
  });

  it("stores at most 2048 bytes of a 10 KB response body", async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ status: 500, body: "x".repeat(10_240) }));
    const outcome = await send(sender(), hook.url);

    expect(outcome.responseBody).toBe("x".repeat(2_048));
  });

  it("does not split a multi-byte character cut by the 2048-byte limit", async () => {
    const hook = await receiver();
    // "é" takes bytes 2047-2048 and "🎉" bytes 2046-2049: the limit falls inside each.
    const bodies = ["a".repeat(2_047) + "é" + "b".repeat(100), "a".repeat(2_046) + "🎉" + "b"];
    hook.respondWith((_req, i) => ({ status: 200, body: bodies[i]! }));
    const target = sender();

    expect((await send(target, hook.url)).responseBody).toBe("a".repeat(2_047));
    expect((await send(target, hook.url)).responseBody).toBe("a".repeat(2_046));
  });

  it("keeps a multi-byte character that ends exactly at the limit", async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ status: 200, body: "a".repeat(2_046) + "é" + "tail" }));
    expect((await send(sender(), hook.url)).responseBody).toBe("a".repeat(2_046) + "é");
  });

  it("honours a smaller maxResponseBytes", async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ status: 400, body: "0123456789" }));
    expect((await send(sender({ maxResponseBytes: 4 }), hook.url)).responseBody).toBe("0123");
  });

  it("stops reading an endless response body once it has enough", async () => {
    let written = 0;
    const url = await rawServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, "z");
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) written += chunk.length;
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    });
    const outcome = await send(sender(), url);

    expect(outcome).toMatchObject({
      ok: true,
      responseStatus: 200,
      responseBody: "z".repeat(2_048),
    });
    expect(outcome.durationMs).toBeLessThan(2_000);
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });
});

describe("webhook sender: time-outs and connection failures", () => {
  it("fails an attempt whose answer takes longer than timeoutMs, within about a second", async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ status: 200, delayMs: 5_000 }));
    const started = performance.now();
    const outcome = await send(sender({ timeoutMs: 300 }), hook.url);

    expect(performance.now() - started).toBeLessThan(1_000);
    expect(outcome).toMatchObject({
      ok: false,
      responseStatus: null,
      responseBody: null,
      error: "timed out after 300 ms waiting for the response",
    });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(290);
  });

  it("counts the body read against the time-out and keeps what arrived", async () => {
    const url = await rawServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial"); // and never end
    });
    const outcome = await send(sender({ timeoutMs: 300 }), url);

    expect(outcome).toMatchObject({
      ok: false,
      responseStatus: 200,
      responseBody: "partial",
      error: "timed out after 300 ms reading the response body",
    });
  });

  it("gives up on a TLS handshake that never completes after connectTimeoutMs", async () => {
    const silent = net.createServer(() => undefined); // accepts TCP, never speaks TLS
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    const sockets = new Set<net.Socket>();
    silent.on("connection", (s) => sockets.add(s));
    cleanups.push(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const { port } = silent.address() as AddressInfo;

    const started = performance.now();
    const outcome = await send(
      sender({ timeoutMs: 10_000, connectTimeoutMs: 200 }),
      `https://127.0.0.1:${port}/hook`,
    );
    expect(outcome).toMatchObject({
      ok: false,
      responseStatus: null,
      error: "connect timed out after 200 ms",
    });
    expect(performance.now() - started).toBeLessThan(900);
  });

  it("counts a DNS lookup that never answers against the connect budget", async () => {
    const hanging: LookupFunction = () => undefined;
    const outcome = await send(
      sender({ timeoutMs: 10_000, connectTimeoutMs: 200, lookup: hanging }),
      "http://slow-dns.test/hook",
    );
    expect(outcome.error).toBe("connect timed out after 200 ms");
    expect(outcome.durationMs).toBeLessThan(900);
  });

  it("caps the connect budget at timeoutMs", async () => {
    const hanging: LookupFunction = () => undefined;
    const started = performance.now();
    const outcome = await send(
      sender({ timeoutMs: 200, connectTimeoutMs: 5_000, lookup: hanging }),
      "http://slow-dns.test/hook",
    );
    expect(outcome).toMatchObject({ ok: false, responseStatus: null });
    expect(outcome.error).toMatch(/^(connect timed out|timed out) after 200 ms/);
    expect(performance.now() - started).toBeLessThan(900);
  });

  it("reports a refused connection with the address and port", async () => {
    const port = await closedPort();
    const outcome = await send(sender(), `http://127.0.0.1:${port}/hook`);

    expect(outcome).toMatchObject({
      ok: false,
      responseStatus: null,
      responseBody: null,
      error: `connection refused (ECONNREFUSED) to 127.0.0.1:${port}`,
    });
  });

  it("reports a DNS failure with the host name and the resolver's code", async () => {
    const notFound: LookupFunction = (hostname, _options, callback) =>
      callback(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }),
        "",
      );
    const outcome = await send(sender({ lookup: notFound }), "https://nosuch.invalid/hook");

    expect(outcome).toMatchObject({
      ok: false,
      responseStatus: null,
      error: "DNS lookup failed for nosuch.invalid: ENOTFOUND",
    });
  });

  it("reports a connection dropped before the answer", async () => {
    const hook = await receiver();
    hook.respondWith(() => ({ destroy: true }));
    const outcome = await send(sender(), hook.url);

    expect(outcome).toMatchObject({ ok: false, responseStatus: null, responseBody: null });
    expect(outcome.error).toMatch(/connection (closed|reset)/);
    expect(hook.requests).toHaveLength(1);
  });

  it("never puts the signature in an error", async () => {
    // A connection dropped by the receiver, not a closed port: a port found closed can be taken by
    // another test's server before the send reaches it.
    const dropping = await receiver();
    dropping.respondWith(() => ({ destroy: true }));
    const hook = await receiver();
    hook.respondWith(() => ({ status: 200, delayMs: 2_000 }));
    const outcomes = await Promise.all([
      send(sender(), dropping.url),
      send(sender({ timeoutMs: 100 }), hook.url),
      send(sender({ allowPrivateNetworks: false }), hook.url),
    ]);
    for (const outcome of outcomes) {
      expect(outcome.ok).toBe(false);
      expect(outcome.error).not.toContain(SIGNATURE_HEX);
      expect(outcome.error).not.toContain(SECRET);
    }
  });
});

describe("webhook sender: SSRF guard at send time", () => {
  const strict = { allowPrivateNetworks: false };

  // The refusal is the send's outcome, given before any connection: nothing is left in flight.
  async function expectNothingReached(hook: Receiver): Promise<void> {
    expect(hook.requests).toHaveLength(0);
    expect(hook.connectionCount).toBe(0);
  }

  it("refuses localhost before connecting", async () => {
    const hook = await receiver();
    const outcome = await send(sender(strict), `http://localhost:${hook.port}/hook`);

    expect(outcome).toMatchObject({
      ok: false,
      responseStatus: null,
      responseBody: null,
      error: "target refused: host localhost is a loopback name",
    });
    await expectNothingReached(hook);
  });

  it.each([
    ["127.0.0.1", "address 127.0.0.1 is in a loopback range"],
    ["[::ffff:127.0.0.1]", "address ::ffff:7f00:1 maps to 127.0.0.1, which is in a loopback range"],
    ["2130706433", "address 127.0.0.1 is in a loopback range"],
  ])("refuses the IP literal %s before connecting", async (host, why) => {
    const hook = await receiver();
    const outcome = await send(sender(strict), `http://${host}:${hook.port}/hook`);

    expect(outcome.error).toBe(`target refused: ${why}`);
    await expectNothingReached(hook);
  });

  it("refuses a host name that resolves to a private address, naming both", async () => {
    const calls: string[] = [];
    const outcome = await send(
      sender({ ...strict, lookup: fixedLookup(["10.0.0.1"], calls) }),
      "https://internal.example/hook",
    );

    expect(outcome).toMatchObject({
      ok: false,
      responseStatus: null,
      error:
        "target refused: address 10.0.0.1 is in a private range (resolved from internal.example)",
    });
    expect(calls).toEqual(["internal.example"]);
  });

  it("refuses a host name when any of its addresses is refused", async () => {
    const outcome = await send(
      sender({ ...strict, lookup: fixedLookup(["8.8.8.8", "169.254.169.254"]) }),
      "https://mixed.example/hook",
    );
    expect(outcome.error).toBe(
      "target refused: address 169.254.169.254 is a cloud metadata address (resolved from mixed.example)",
    );
  });

  it("refuses a host name resolving to the receiver's own loopback address: nothing reaches it", async () => {
    const hook = await receiver();
    const outcome = await send(
      sender({ ...strict, lookup: fixedLookup(["127.0.0.1"]) }),
      `http://rebound.example:${hook.port}/hook`,
    );

    expect(outcome.error).toBe(
      "target refused: address 127.0.0.1 is in a loopback range (resolved from rebound.example)",
    );
    await expectNothingReached(hook);
  });

  it("connects to the looked-up address and keeps the host name in the Host header", async () => {
    const hook = await receiver();
    const outcome = await send(
      sender({ lookup: fixedLookup(["127.0.0.1"]) }),
      `http://receiver.example:${hook.port}/hook`,
    );

    expect(outcome.ok).toBe(true);
    const [request] = await hook.waitForRequests(1);
    expect(request!.headers.host).toBe(`receiver.example:${hook.port}`);
  });
});

describe("webhook sender: lifecycle", () => {
  it("answers every send after close with a failed outcome instead of throwing", async () => {
    const hook = await receiver();
    const target = createWebhookSender({
      timeoutMs: 1_000,
      allowPrivateNetworks: true,
      allowHttp: true,
    });
    expect((await send(target, hook.url)).ok).toBe(true);
    await target.close(); // with an idle keep-alive connection open
    await target.close();

    expect(await send(target, hook.url)).toMatchObject({ ok: false, error: "sender is closed" });
    expect(hook.requests).toHaveLength(1);
  });

  it.each(["not a url", "ftp://example.com/hook"])(
    "answers %j with a failed outcome",
    async (url) => {
      const outcome = await send(sender(), url);
      expect(outcome.ok).toBe(false);
      expect(outcome.responseStatus).toBeNull();
      expect(outcome.error).toMatch(/invalid receiver url|url scheme ftp is not supported/);
    },
  );
});
