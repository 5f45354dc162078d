import type { Webhook } from "@parley/client";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { createTestPki, startMtlsReceiver, type TestPki } from "../../../../helpers/test-pki.js";
import { startOperatingApp, type OperatingApp } from "./operating-fixture.js";

describeEachDialect("Mutual TLS (tls) on $name", (dialect) => {
  let d: OperatingApp;
  let pki: TestPki;
  beforeAll(async () => {
    d = await startOperatingApp(dialect);
    pki = createTestPki();
  });
  afterAll(() => d?.close());

  async function receiver() {
    const started = await startMtlsReceiver(pki);
    onTestFinished(() => started.close());
    return started;
  }

  async function attempts(endpoint: Webhook) {
    const list = await d.api("GET", `/api/admin/webhooks/${endpoint.id}/deliveries`);
    const [summary] = list.json().items as Array<{ id: number; attempts: number }>;
    if (summary === undefined || summary.attempts === 0) return [];
    const detail = await d.api(
      "GET",
      `/api/admin/webhooks/${endpoint.id}/deliveries/${summary.id}`,
    );
    return detail.json().attemptHistory as Array<{ error: string | null }>;
  }

  it("presents the endpoint's client certificate, trusts its CA, and shows the subject and expiry, never the key", async () => {
    const mtls = await receiver();
    const client = pki.client("endpoint-a");
    const endpoint = await d.create({
      url: mtls.url,
      // The receiver's certificate is from a private CA that only this endpoint trusts.
      tls: { clientCertificatePem: client.cert, clientKeyPem: client.key, caPem: pki.ca.cert },
    });
    expect(endpoint.tls).toEqual({
      subject: "O=Parley Test, CN=endpoint-a",
      expiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
    });
    expect(new Date(endpoint.tls!.expiresAt).getTime()).toBeGreaterThan(
      Date.now() + 6 * 86_400_000,
    );
    await d.emitUser("mtls");
    await expect.poll(() => mtls.requests.length, { interval: 20, timeout: 5_000 }).toBe(1);
    expect(mtls.requests[0]!.clientCn).toBe("endpoint-a");
    const read = await d.api("GET", `/api/admin/webhooks/${endpoint.id}`);
    expect(read.body).not.toContain("PRIVATE KEY");
    const row = await d.t.ctx.db
      .selectFrom("webhooks")
      .select(["tls_ciphertext", "tls_subject"])
      .where("id", "=", endpoint.id)
      .executeTakeFirstOrThrow();
    expect(row.tls_ciphertext).not.toContain("PRIVATE KEY");
    expect(row.tls_subject).toBe("O=Parley Test, CN=endpoint-a");
  });

  it("fails the attempt when the receiver requires a certificate the endpoint does not have", async () => {
    const mtls = await receiver();
    const client = pki.client("no-ca");
    // Without caPem the private CA is not trusted: the handshake fails on Parley's side.
    const untrusting = await d.create({
      url: mtls.url,
      tls: { clientCertificatePem: client.cert, clientKeyPem: client.key },
    });
    await d.emitUser("untrusting");
    await expect
      .poll(async () => (await attempts(untrusting))[0]?.error, { interval: 50, timeout: 5_000 })
      .toMatch(/^TLS error: /);
    expect(mtls.requests).toHaveLength(0);
  });

  it("never lets two endpoints with different certificates share a connection, while each reuses its own", async () => {
    const mtls = await receiver();
    const a = pki.client("pool-a");
    const b = pki.client("pool-b");
    const tlsOf = (c: { cert: string; key: string }) => ({
      clientCertificatePem: c.cert,
      clientKeyPem: c.key,
      caPem: pki.ca.cert,
    });
    const endpointA = await d.create({ url: mtls.url, tls: tlsOf(a) });
    const endpointB = await d.create({ url: mtls.url, tls: tlsOf(b) });
    const count = (cn: string) => mtls.requests.filter((r) => r.clientCn === cn).length;
    for (let i = 0; i < 6; i++) {
      await d.emitUser(`pool-${i}`);
      await expect
        .poll(() => Math.min(count("pool-a"), count("pool-b")), { interval: 10, timeout: 10_000 })
        .toBeGreaterThanOrEqual(i + 1);
    }
    const byConnection = new Map<number, Set<string | null>>();
    for (const request of mtls.requests) {
      const seen = byConnection.get(request.connectionId) ?? new Set();
      seen.add(request.clientCn);
      byConnection.set(request.connectionId, seen);
    }
    // Every connection carried one identity only.
    for (const identities of byConnection.values()) expect(identities.size).toBe(1);
    expect(count("pool-a") + count("pool-b")).toBe(mtls.requests.length);
    // Keep-alive within each identity: far fewer connections than requests (one each, unless a
    // slow answer under load made the sender open another).
    expect(mtls.connections).toBeLessThanOrEqual(mtls.requests.length / 2);
    expect(endpointA.tls!.subject).not.toBe(endpointB.tls!.subject);
  });

  it("opens an encrypted key with its passphrase", async () => {
    const mtls = await receiver();
    const client = pki.client("encrypted", { passphrase: "open sesame" });
    expect(client.key).toContain("ENCRYPTED");
    const endpoint = await d.create({
      url: mtls.url,
      tls: {
        clientCertificatePem: client.cert,
        clientKeyPem: client.key,
        passphrase: "open sesame",
        caPem: pki.ca.cert,
      },
    });
    await d.emitUser("encrypted-key");
    await expect.poll(() => mtls.requests.length, { interval: 20, timeout: 5_000 }).toBe(1);
    expect(mtls.requests[0]!.clientCn).toBe("encrypted");
    const removed = await d.api("PATCH", `/api/admin/webhooks/${endpoint.id}`, { tls: null });
    expect(removed.json().tls).toBeNull();
  });

  it("answers 400 invalid_tls for bad PEM, a key that is not the certificate's, or a wrong passphrase", async () => {
    const one = pki.client("one");
    const other = pki.client("other");
    const locked = pki.client("locked", { passphrase: "right passphrase" });
    const cases: Array<[object, string]> = [
      [
        { clientCertificatePem: "not a certificate", clientKeyPem: one.key },
        "holds no PEM certificate",
      ],
      [
        {
          clientCertificatePem: one.cert.replace("CERTIFICATE-----\nMI", "CERTIFICATE-----\nAA"),
          clientKeyPem: one.key,
        },
        "not a valid X.509 certificate",
      ],
      [
        {
          clientCertificatePem: one.cert,
          clientKeyPem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        },
        "not a valid PEM private key",
      ],
      [{ clientCertificatePem: one.cert, clientKeyPem: other.key }, "is not the private key of"],
      [{ clientCertificatePem: locked.cert, clientKeyPem: locked.key }, "give its passphrase"],
      [
        { clientCertificatePem: locked.cert, clientKeyPem: locked.key, passphrase: "wrong one" },
        "could not be decrypted",
      ],
      [
        { clientCertificatePem: one.cert, clientKeyPem: one.key, caPem: "junk" },
        "tls.caPem holds no PEM",
      ],
    ];
    for (const [tls, detail] of cases) {
      const res = await d.api("POST", "/api/admin/webhooks", {
        name: "bad tls",
        url: "https://receiver.example/hook",
        secret: "0123456789abcdef",
        events: ["ADMIN_USER_DISABLED"],
        tls,
      });
      expect(res.statusCode, detail).toBe(400);
      expect(res.json().code).toBe("invalid_tls");
      expect(res.json().detail).toContain(detail);
      expect(res.body).not.toContain("PRIVATE KEY");
      expect(res.body).not.toContain("wrong one");
    }
  });
});
