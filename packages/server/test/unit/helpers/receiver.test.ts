import { afterEach, describe, expect, it } from "vitest";
import { startReceiver, type Receiver } from "../../helpers/receiver.js";

const open: Receiver[] = [];
afterEach(async () => {
  for (const receiver of open.splice(0)) await receiver.close();
});

async function start(options?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const receiver = await startReceiver(options);
  open.push(receiver);
  return receiver;
}

const post = (url: string, body = "{}") =>
  fetch(url, { method: "POST", body, headers: { "content-type": "application/json" } });

describe("test receiver", () => {
  it("answers 204 by default and records the request with its raw bytes", async () => {
    const receiver = await start();
    expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hook$/);
    const before = Date.now();
    const response = await post(receiver.url, '{"a":"é"}');

    expect(response.status).toBe(204);
    const [request] = await receiver.waitForRequests(1);
    expect(request).toMatchObject({ method: "POST", path: "/hook", connectionId: 1 });
    expect(request!.body.equals(Buffer.from('{"a":"é"}'))).toBe(true);
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.rawHeaders).toContain("content-type");
    expect(request!.receivedAt).toBeGreaterThanOrEqual(before);
  });

  it("answers as scripted, with the index of each request", async () => {
    const receiver = await start();
    receiver.respondWith((req, index) => ({
      status: index === 0 ? 503 : 200,
      body: `#${index} ${req.body.toString()}`,
      headers: { "x-test": "yes" },
    }));
    const first = await post(receiver.url, "one");
    const second = await post(receiver.url, "two");

    expect([first.status, await first.text(), first.headers.get("x-test")]).toEqual([
      503,
      "#0 one",
      "yes",
    ]);
    expect([second.status, await second.text()]).toEqual([200, "#1 two"]);
  });

  it("answers 500 with the reason when the script throws", async () => {
    const receiver = await start();
    receiver.respondWith(() => {
      throw new Error("script broke");
    });
    const response = await post(receiver.url);
    expect([response.status, await response.text()]).toEqual([
      500,
      "receiver script failed: script broke",
    ]);
  });

  it("delays an answer by delayMs", async () => {
    const receiver = await start();
    receiver.respondWith(() => ({ status: 200, delayMs: 150 }));
    const started = performance.now();
    await post(receiver.url);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("drops the connection without answering when told to", async () => {
    const receiver = await start();
    receiver.respondWith(() => ({ destroy: true }));
    await expect(post(receiver.url)).rejects.toThrow();
    expect(receiver.requests).toHaveLength(1);
  });

  it("rejects waitForRequests with the count it saw when too few arrive", async () => {
    const receiver = await start();
    await post(receiver.url);
    await expect(receiver.waitForRequests(2, 100)).rejects.toThrow(
      "receiver expected 2 request(s) within 100 ms, got 1",
    );
  });

  it("resolves waitForRequests when a later request arrives", async () => {
    const receiver = await start();
    const waiting = receiver.waitForRequests(1);
    await post(receiver.url);
    expect(await waiting).toHaveLength(1);
  });

  it("closes promptly with an answer still pending", async () => {
    const receiver = await startReceiver();
    receiver.respondWith(() => ({ status: 200, delayMs: 60_000 }));
    const pending = post(receiver.url).catch((err: unknown) => err);
    await receiver.waitForRequests(1);
    const started = performance.now();
    await receiver.close();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await pending).toBeInstanceOf(Error);
  });

  it("serves HTTPS on localhost with a certificate it hands out", async () => {
    const receiver = await start({ tls: true });
    expect(receiver.url).toMatch(/^https:\/\/localhost:\d+\/hook$/);
    expect(receiver.caPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it("listens on the IPv6 loopback when asked", async () => {
    const receiver = await start({ host: "::1" });
    expect(receiver.url).toMatch(/^http:\/\/\[::1\]:\d+\/hook$/);
    expect((await post(receiver.url)).status).toBe(204);
  });
});
