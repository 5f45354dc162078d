/**
 * The send-time SSRF guard through the whole engine: a dispatcher built by createDispatcher from a
 * configuration with production settings (https only, no private networks), so that the wiring
 * from the settings to the sender is what is tested. Every other app test allows http and private
 * addresses, to reach its loopback receiver. The receiver here speaks HTTPS with a certificate
 * the app trusts (PARLEY_WEBHOOK_CA_FILE), so nothing but the address can stop a delivery.
 */
import { lookup as systemLookup } from "node:dns";
import fs from "node:fs";
import type { LookupFunction } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { describeEachDialect } from "../../../../helpers/dialects.js";
import { startReceiver, type Receiver } from "../../../../helpers/receiver.js";
import { selfSignedCert } from "../../../../helpers/tls-cert.js";
import { waitFor } from "../../../../helpers/wait-for.js";
import { startDeliveryApp, type DeliveryApp } from "./delivery-fixture.js";

const REBOUND = "receiver.parley.test";

/** A resolver that answers 127.0.0.1 for REBOUND, as a public name pointed at loopback would. */
const rebinding: LookupFunction = (hostname, options, callback) => {
  if (hostname !== REBOUND) return systemLookup(hostname, options, callback);
  if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
  else callback(null, "127.0.0.1", 4);
};

describeEachDialect("the send-time SSRF guard with production settings on $name", (dialect) => {
  let caDir: string;
  let production: Record<string, string | boolean>;
  beforeAll(() => {
    caDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-ssrf-ca-"));
    const caFile = path.join(caDir, "receiver-ca.pem");
    fs.writeFileSync(caFile, selfSignedCert().cert);
    production = {
      webhookAllowHttp: false,
      webhookAllowPrivateNetworks: false,
      webhookCaFile: caFile,
    };
  });
  afterAll(() => {
    fs.rmSync(caDir, { recursive: true, force: true });
  });

  async function receiver(): Promise<Receiver> {
    const started = await startReceiver({ tls: true });
    onTestFinished(() => started.close());
    return started;
  }

  async function app(settings: object): Promise<DeliveryApp> {
    const d = await startDeliveryApp(dialect, settings, { lookup: rebinding });
    onTestFinished(() => d.close());
    return d;
  }

  /** Emits one event to an endpoint at `url` and answers its first recorded attempt. */
  async function firstAttempt(d: DeliveryApp, url: string) {
    const endpoint = await d.endpoint(url);
    await d.emitUser(`ssrf-${endpoint.id}`);
    const [row] = (await d.deliveries()).filter((r) => r.webhook_id === endpoint.id);
    const [attempt] = await waitFor("the first attempt", async () => {
      const attempts = await d.attempts(row!.id);
      return attempts.length > 0 && attempts;
    });
    return attempt!;
  }

  it("refuses a loopback address already in the database, and nothing reaches it", async () => {
    const d = await app(production);
    const target = await receiver();
    // Written before the settings were tightened (the admin API would refuse it now).
    const attempt = await firstAttempt(d, `https://127.0.0.1:${target.port}/hook`);
    expect(attempt).toMatchObject({
      response_status: null,
      error: "target refused: address 127.0.0.1 is in a loopback range",
    });
    // The refusal is the attempt's outcome, reached before any connection was opened.
    expect(target.connectionCount).toBe(0);
    expect(target.requests).toHaveLength(0);
  });

  it("refuses a name that resolves to 127.0.0.1, and nothing reaches it", async () => {
    const d = await app(production);
    const target = await receiver();
    const attempt = await firstAttempt(d, `https://${REBOUND}:${target.port}/hook`);
    expect(attempt).toMatchObject({
      response_status: null,
      error: `target refused: address 127.0.0.1 is in a loopback range (resolved from ${REBOUND})`,
    });
    expect(target.connectionCount).toBe(0);
    expect(target.requests).toHaveLength(0);
  });

  it("delivers to that same name when private networks are allowed (the control)", async () => {
    const d = await app({ ...production, webhookAllowPrivateNetworks: true });
    const target = await receiver();
    const attempt = await firstAttempt(d, `https://${REBOUND}:${target.port}/hook`);
    expect(attempt).toMatchObject({ response_status: 204, error: null });
    expect(target.requests).toHaveLength(1);
  });
});
