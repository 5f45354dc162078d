/**
 * PARLEY_WEBHOOK_PROXY_URL through the whole engine, with a real CONNECT proxy (the `proxy`
 * package): deliveries and OAuth token requests tunnel through it, to the address the SSRF guard
 * checked, never to a name the proxy would resolve itself.
 */
import fs from "node:fs";
import type { LookupFunction } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { startConnectProxy, type ConnectProxy } from "../../../../helpers/connect-proxy.js";
import { describeEachDialect, SQLITE } from "../../../../helpers/dialects.js";
import { startTokenServer } from "../../../../helpers/oauth2-token-server.js";
import { startReceiver } from "../../../../helpers/receiver.js";
import { createTestPki, startMtlsReceiver } from "../../../../helpers/test-pki.js";
import { selfSignedCert } from "../../../../helpers/tls-cert.js";
import { startOperatingApp, type OperatingApp } from "../admin-api/operating-fixture.js";

/** receiver.parley.test and idp.parley.test resolve to 127.0.0.1, as public names pointed there would. */
const toLoopback: LookupFunction = (_hostname, options, callback) => {
  if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
  else callback(null, "127.0.0.1", 4);
};

async function errorOf(d: OperatingApp, webhookId: number): Promise<string | undefined> {
  const list = await d.api("GET", `/api/admin/webhooks/${webhookId}/deliveries`);
  const [summary] = list.json().items as Array<{ id: number; attempts: number }>;
  if (summary === undefined || summary.attempts === 0) return undefined;
  const detail = await d.api("GET", `/api/admin/webhooks/${webhookId}/deliveries/${summary.id}`);
  return detail.json().attemptHistory[0].error as string;
}

describeEachDialect("deliveries through the egress proxy on $name", (dialect) => {
  let proxy: ConnectProxy;
  let d: OperatingApp;
  beforeAll(async () => {
    proxy = await startConnectProxy();
    const caDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-proxy-ca-"));
    const caFile = path.join(caDir, "receiver-ca.pem");
    fs.writeFileSync(caFile, selfSignedCert().cert);
    d = await startOperatingApp(
      dialect,
      { webhookProxyUrl: proxy.url, webhookCaFile: caFile },
      { lookup: toLoopback },
    );
  });
  afterAll(async () => {
    await d?.close();
    await proxy?.close();
  });
  const tunnelsTo = (port: number) =>
    proxy.connects.filter((target) => target.endsWith(`:${port}`));

  it("tunnels an http delivery to the checked address, with the receiver's name in Host", async () => {
    const receiver = await d.receiver();
    const endpoint = await d.create({ url: `http://receiver.parley.test:${receiver.port}/hook` });
    await d.emitUser("through-proxy");
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers.host).toBe(`receiver.parley.test:${receiver.port}`);
    // Every endpoint of the app hears the event: look at this receiver's tunnels only.
    expect(tunnelsTo(receiver.port)).toEqual([`127.0.0.1:${receiver.port}`]);
    expect(endpoint.id).toBeGreaterThan(0);
  });

  it("runs TLS through the tunnel, verifying the certificate against the receiver's name", async () => {
    const receiver = await startReceiver({ tls: true });
    onTestFinished(() => receiver.close());
    await d.create({ url: `https://receiver.parley.test:${receiver.port}/hook` });
    await d.emitUser("tls-through-proxy");
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers.host).toBe(`receiver.parley.test:${receiver.port}`);
    // Every endpoint of the app hears the event: look at this receiver's tunnels only.
    expect(tunnelsTo(receiver.port)).toEqual([`127.0.0.1:${receiver.port}`]);
  });

  it("presents an endpoint's client certificate through the tunnel (mutual TLS behind the proxy)", async () => {
    const pki = createTestPki();
    const mtls = await startMtlsReceiver(pki);
    onTestFinished(() => mtls.close());
    const client = pki.client("behind-proxy");
    const port = Number(new URL(mtls.url).port);
    await d.create({
      url: mtls.url,
      tls: { clientCertificatePem: client.cert, clientKeyPem: client.key, caPem: pki.ca.cert },
    });
    await d.emitUser("mtls-through-proxy");
    await expect.poll(() => mtls.requests.length, { interval: 20, timeout: 5_000 }).toBe(1);
    expect(mtls.requests[0]!.clientCn).toBe("behind-proxy");
    expect(tunnelsTo(port)).toEqual([`127.0.0.1:${port}`]);
  });

  it("sends OAuth token requests through the proxy too", async () => {
    const tokens = await startTokenServer();
    onTestFinished(() => tokens.close());
    const tokenPort = new URL(tokens.tokenUrl).port;
    const receiver = await d.receiver();
    await d.create({
      url: `http://receiver.parley.test:${receiver.port}/hook`,
      auth: {
        type: "oauth2",
        tokenUrl: `http://idp.parley.test:${tokenPort}/token`,
        clientId: "proxied",
        clientSecret: "proxied-secret",
      },
    });
    await d.emitUser("oauth-through-proxy");
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers.authorization).toMatch(/^Bearer /);
    expect(tokens.requests.filter((r) => r.basic?.clientId === "proxied")).toHaveLength(1);
    expect(tunnelsTo(Number(tokenPort))).toEqual([`127.0.0.1:${tokenPort}`]);
    expect(tunnelsTo(receiver.port)).toEqual([`127.0.0.1:${receiver.port}`]);
  });
});

describe("the egress proxy and the SSRF rules", () => {
  it("checks the receiver's address before asking the proxy: a refused address never reaches it", async () => {
    const proxy = await startConnectProxy();
    const d = await startOperatingApp(
      SQLITE,
      { webhookProxyUrl: proxy.url, webhookAllowPrivateNetworks: false },
      { lookup: toLoopback },
    );
    onTestFinished(async () => {
      await d.close();
      await proxy.close();
    });
    const receiver = await d.receiver();
    const endpoint = await d.create({ url: `http://receiver.parley.test:${receiver.port}/hook` });
    const tokenEndpoint = await d.create({
      url: `http://receiver.parley.test:${receiver.port}/hook`,
      auth: {
        type: "oauth2",
        tokenUrl: `http://idp.parley.test:${receiver.port}/token`,
        clientId: "c",
        clientSecret: "refused-secret",
      },
    });
    await d.emitUser("refused");
    await expect
      .poll(() => errorOf(d, endpoint.id), { interval: 50, timeout: 5_000 })
      .toBe(
        "target refused: address 127.0.0.1 is in a loopback range (resolved from receiver.parley.test)",
      );
    await expect
      .poll(() => errorOf(d, tokenEndpoint.id), { interval: 50, timeout: 5_000 })
      .toMatch(
        /^OAuth token request to http:\/\/idp\.parley\.test:\d+\/token failed: target refused: address 127\.0\.0\.1 is in a loopback range/,
      );
    expect(proxy.connects).toEqual([]);
    expect(receiver.requests).toHaveLength(0);
  });

  it("authenticates to the proxy with the URL's credentials, and says so when the proxy refuses them, without them", async () => {
    const proxy = await startConnectProxy({ username: "parley", password: "proxy pass/word" });
    const good = await startOperatingApp(
      SQLITE,
      { webhookProxyUrl: proxy.url },
      { lookup: toLoopback },
    );
    const wrongUrl = proxy.url.replace("proxy%20pass%2Fword", "wrong-password");
    const bad = await startOperatingApp(
      SQLITE,
      { webhookProxyUrl: wrongUrl },
      { lookup: toLoopback },
    );
    onTestFinished(async () => {
      await good.close();
      await bad.close();
      await proxy.close();
    });
    const receiver = await good.receiver();
    await good.create({ url: `http://receiver.parley.test:${receiver.port}/hook` });
    await good.emitUser("authenticated");
    await receiver.waitForRequests(1);

    const refused = await bad.create({ url: `http://receiver.parley.test:${receiver.port}/hook` });
    await bad.emitUser("refused-by-proxy");
    await expect
      .poll(() => errorOf(bad, refused.id), { interval: 50, timeout: 5_000 })
      .toBe(
        `egress proxy 127.0.0.1:${proxy.port} answered CONNECT 127.0.0.1:${receiver.port} with HTTP 407 (proxy authentication required: check the credentials in PARLEY_WEBHOOK_PROXY_URL)`,
      );
    expect(receiver.requests).toHaveLength(1);
  });

  it("names an egress proxy that cannot be reached", async () => {
    const gone = await startConnectProxy();
    const url = gone.url;
    await gone.close();
    const d = await startOperatingApp(SQLITE, { webhookProxyUrl: url }, { lookup: toLoopback });
    onTestFinished(() => d.close());
    const receiver = await d.receiver();
    const endpoint = await d.create({ url: `http://receiver.parley.test:${receiver.port}/hook` });
    await d.emitUser("no-proxy");
    await expect
      .poll(() => errorOf(d, endpoint.id), { interval: 50, timeout: 5_000 })
      .toBe(`egress proxy 127.0.0.1:${gone.port} could not be reached (ECONNREFUSED)`);
    expect(receiver.requests).toHaveLength(0);
  });
});
