import { randomBytes } from "node:crypto";
import { once } from "node:events";
import http, { type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createWebhookHandler,
  WebhookSecretError,
  type WebhookEvent,
  type WebhookReply,
  type WebhookSignatureScheme,
  WEBHOOK_TEST,
  WEBHOOK_VERIFICATION,
} from "@parley/client";
import type { SignatureScheme } from "@parley/client/wire";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { EXIT } from "./exit-codes.js";
import { registerEndpoint, type Registration } from "./listen-registration.js";
import { parseChoice, parseEvents } from "./parse-choice.js";

export interface WebhooksListenOptions {
  port: string;
  host: string;
  /** Repeatable: every one verifies (a rotation's old and new secret); falls back to PARLEY_WEBHOOK_SECRET. */
  secret?: string[];
  /** The endpoint's `whpk_` public key (standard-webhooks-ed25519); this or a secret, or both. */
  publicKey?: string;
  forwardTo?: string;
  /**
   * The signature schemes to accept, comma-separated: `standard-webhooks`, `parley`, or both (the
   * default). `standard-webhooks` alone never falls back to the timestamp-less parley header.
   */
  scheme?: string;
  /** Only these events are printed and forwarded (names or wildcards); with --register, subscribed. */
  events?: string[];
  /** Create a temporary endpoint pointing here through the API, and delete it on exit. */
  register?: boolean;
  /** The address Parley sends to when registering (a tunnel); default the listening address. */
  publicUrl?: string;
  /** The registered endpoint's name. */
  name?: string;
  /** One JSON object per line: `{receivedAt, verified, event?, format?, traceId?, reason?, forwarded?}`. */
  json?: boolean;
}

/** The same bounds the API puts on an endpoint's secret (docs/webhooks.md, "Endpoint fields"). */
const SECRET_LENGTH = { min: 16, max: 1024 };

/** Headers not to copy when forwarding: they describe the hop, not the delivery. */
const HOP_HEADERS = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
]);

/**
 * `parley webhooks listen`: a local receiver for integrators. It verifies each delivery's
 * signature and prints one line per event; a forged or unsigned request is printed as rejected
 * and answered 401. With `--forward-to`, each verified delivery is re-sent (same bytes, same
 * headers) to a local app, and the app's status is both printed and answered back to Parley, so
 * Parley retries what the app failed. With `--register`, it creates its own endpoint through the
 * API (see listen-registration.ts) and deletes it when stopped. Runs until SIGINT or SIGTERM.
 */
export async function webhooksListen(io: CliIo, options: WebhooksListenOptions): Promise<void> {
  const given =
    options.secret ?? (io.env.PARLEY_WEBHOOK_SECRET ? [io.env.PARLEY_WEBHOOK_SECRET] : []);
  const publicKey = options.publicKey;
  if (given.length === 0 && !options.register && publicKey === undefined)
    throw new CliError(
      "--secret is required (or set PARLEY_WEBHOOK_SECRET, or use --register), or --public-key for a standard-webhooks-ed25519 endpoint",
    );
  if (options.register && publicKey !== undefined)
    throw new CliError(
      "--register makes an endpoint that signs with a secret: leave out --public-key (or register the endpoint yourself)",
    );
  for (const secret of given)
    if (secret.length < SECRET_LENGTH.min || secret.length > SECRET_LENGTH.max)
      throw new CliError(
        `--secret must be ${SECRET_LENGTH.min} to ${SECRET_LENGTH.max} characters, as an endpoint's secret is (got ${secret.length}); use the secret the endpoint was created with`,
      );
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`--port must be a port number, got "${options.port}"`);
  }
  const forwardTo =
    options.forwardTo === undefined ? undefined : checkedUrl(options.forwardTo, "--forward-to");
  const publicUrl =
    options.publicUrl === undefined ? undefined : checkedUrl(options.publicUrl, "--public-url");
  if (!options.register && (publicUrl !== undefined || options.name !== undefined))
    throw new CliError("--public-url and --name go with --register");
  const schemes = options.scheme === undefined ? undefined : parseSchemes(options.scheme);
  const events = options.events === undefined ? undefined : parseEvents(options.events);
  // Checked before anything listens: PARLEY_TOKEN and PARLEY_URL.
  const api = options.register ? apiFromEnv(io.env).api : undefined;
  // Registering without a secret: the endpoint gets a generated one, which this listener verifies.
  // Given only a public key (and not registering), nothing verifies with a secret.
  const secrets =
    given.length > 0 ? given : publicKey === undefined ? [generatedSecret()] : undefined;

  const handler = secretChecked(() =>
    createWebhookHandler({
      ...(secrets === undefined ? {} : { secret: secrets }),
      ...(publicKey === undefined ? {} : { publicKey }),
      ...(schemes === undefined ? {} : { schemes }),
      async onEvent(event, { req, rawBody }) {
        if (events !== undefined && !subscribed(events, event.event)) return undefined;
        // The ownership check: echo the challenge, so an endpoint pointed here gets verified.
        const challenge =
          event.event === WEBHOOK_VERIFICATION
            ? { status: 200, headers: { "content-type": "text/plain" }, body: event.data.challenge }
            : undefined;
        const receivedAt = new Date().toISOString();
        const { format, traceId } = transportOf(req.headers);
        const line =
          `${receivedAt}  ✓ ${event.event}  webhook ${event.webhookId}  ${describeData(event)}` +
          (format === "parley" ? "" : `  (${format})`) +
          (traceId === undefined ? "" : `  trace ${traceId}`);
        const described = {
          receivedAt,
          verified: true,
          event,
          format,
          ...(traceId ? { traceId } : {}),
        };
        // The challenge is answered here, never forwarded: the app need not know the check.
        if (forwardTo === undefined || challenge !== undefined) {
          io.out(options.json ? JSON.stringify(described) : line);
          return challenge;
        }
        const reply = await forward(forwardTo, req.headers, rawBody);
        io.out(
          options.json
            ? JSON.stringify({ ...described, forwarded: reply.summary })
            : `${line}  -> ${reply.summary}`,
        );
        return reply.reply;
      },
      onRejected(rejection, req) {
        const reason =
          rejection.code === "invalid_payload"
            ? `not a Parley event (${rejection.detail.replace(/^.*envelope: /, "")})`
            : /missing/.test(rejection.detail)
              ? "missing signature"
              : "bad signature";
        const receivedAt = new Date().toISOString();
        io.out(
          options.json
            ? JSON.stringify({ receivedAt, verified: false, reason, from: remoteAddress(req) })
            : `${receivedAt}  ✗ rejected: ${reason} from ${remoteAddress(req)}`,
        );
      },
      onError(error) {
        io.err(`parley: handling a delivery failed: ${(error as Error).message}`);
      },
    }),
  );

  const server = http.createServer(handler);
  server.on("clientError", (_error, socket) => socket.destroy());
  server.listen(port, options.host);
  try {
    await Promise.race([
      once(server, "listening"),
      once(server, "error").then(([error]) => Promise.reject(error as Error)),
    ]);
  } catch (error) {
    throw new CliError(`cannot listen on ${options.host}:${port}: ${(error as Error).message}`, {
      exitCode: EXIT.failed,
      code: "cannot_listen",
    });
  }
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const listeningUrl = `http://${host}:${address.port}/`;
  // With --json, stdout carries only events; the banner goes to stderr.
  const say = options.json ? io.err : io.out;
  say(`Listening for Parley webhooks on ${listeningUrl}`);

  let registration: Registration | undefined;
  if (api !== undefined) {
    try {
      registration = await registerEndpoint(api, {
        url: publicUrl ?? listeningUrl,
        name: options.name ?? `parley webhooks listen on ${host}:${address.port}`,
        secret: secrets![0]!,
        events: events ?? ["*"],
        signatureScheme: registeredScheme(schemes),
      });
    } catch (error) {
      server.closeAllConnections();
      server.close();
      throw error;
    }
    const { webhook } = registration;
    say(
      `Registered webhook ${webhook.id} "${webhook.name}" -> ${webhook.url} for ${webhook.events.join(", ")}, ` +
        `signed ${webhook.signatureScheme}; it is deleted when this stops.`,
    );
    if (given.length === 0) say(`  secret (generated, shown only now): ${secrets![0]}`);
  }
  say(
    forwardTo === undefined
      ? "Verified events are printed and answered 204; forged ones are answered 401. Ctrl-C stops."
      : `Verified events are forwarded to ${forwardTo}; its status is answered back. Ctrl-C stops.`,
  );

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      server.closeAllConnections();
      server.close(() => resolve());
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  if (registration !== undefined) {
    await registration.remove();
    say(`Deleted webhook ${registration.webhook.id}.`);
  }
}

/** Standard Webhooks' format, as the API generates: the base64 the libraries read. */
function generatedSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The scheme the registered endpoint signs with: both unless only one HMAC scheme is accepted
 * (its secret is what this listener verifies with, so never standard-webhooks-ed25519).
 */
function registeredScheme(schemes: WebhookSignatureScheme[] | undefined): SignatureScheme {
  const hmac = (schemes ?? []).filter((scheme) => scheme !== "standard-webhooks-ed25519");
  if (schemes !== undefined && hmac.length === 0)
    throw new CliError(
      "--register makes an endpoint that signs with a secret: --scheme must include standard-webhooks or parley",
    );
  if (hmac.length === 1) return hmac[0]!;
  return "both";
}

/**
 * Whether a subscription (names and wildcards) hears `event`; a test delivery and the ownership
 * challenge always pass.
 */
function subscribed(events: readonly string[], event: string): boolean {
  if (event === WEBHOOK_TEST || event === WEBHOOK_VERIFICATION) return true;
  return events.some((entry) =>
    entry.endsWith("*") ? event.startsWith(entry.slice(0, -1)) : entry === event,
  );
}

const SCHEMES: readonly WebhookSignatureScheme[] = [
  "standard-webhooks",
  "standard-webhooks-ed25519",
  "parley",
];

/** `--scheme` values: comma-separated `standard-webhooks`, `standard-webhooks-ed25519`, `parley`. */
function parseSchemes(value: string): WebhookSignatureScheme[] {
  const schemes = value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => parseChoice(part, SCHEMES, "--scheme"));
  if (schemes.length === 0) throw new CliError(`--scheme must name ${SCHEMES.join(" or ")}`);
  return [...new Set(schemes)];
}

/**
 * The receiver, or a CliError when the secret gives no key (a `whsec_` secret that is not base64)
 * or the public key is no `whpk_` ed25519 key.
 */
function secretChecked<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof WebhookSecretError)
      throw new CliError(
        `${/public key/.test(error.message) ? "--public-key" : "--secret"}: ${error.message}`,
      );
    throw error;
  }
}

/**
 * How a delivery came: its payload format (CloudEvents structured or binary mode, or Parley's
 * envelope) and the trace id of its `traceparent`, when the endpoint sends trace context.
 */
function transportOf(headers: http.IncomingHttpHeaders): {
  format: "parley" | "cloudevents" | "cloudevents-binary";
  traceId: string | undefined;
} {
  const format = headers["ce-specversion"]
    ? "cloudevents-binary"
    : (headers["content-type"] ?? "").startsWith("application/cloudevents+json")
      ? "cloudevents"
      : "parley";
  const traceparent = headers.traceparent;
  const traceId =
    typeof traceparent === "string" ? /^00-([0-9a-f]{32})-/.exec(traceparent)?.[1] : undefined;
  return { format, traceId };
}

/** The event's data as `key=value` pairs: ids, names and times (payloads carry no content). */
function describeData(event: WebhookEvent): string {
  return Object.entries(event.data)
    .map(
      ([key, value]) =>
        `${key}=${typeof value === "string" && /\s/.test(value) ? JSON.stringify(value) : String(value)}`,
    )
    .join(" ");
}

async function forward(
  url: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
): Promise<{ summary: string; reply: WebhookReply }> {
  const copied: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_HEADERS.has(name))
      copied[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: copied,
      // A copy typed as a plain Uint8Array, which fetch's body type accepts.
      body: Uint8Array.from(body),
      redirect: "manual",
      signal: AbortSignal.timeout(30_000),
    });
    const answer = Buffer.from(await response.arrayBuffer());
    const contentType = response.headers.get("content-type");
    return {
      summary: `${response.status} from ${url}`,
      reply: {
        status: response.status,
        body: answer,
        ...(contentType === null ? {} : { headers: { "content-type": contentType } }),
      },
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    return {
      summary: `forward failed: ${cause} (${url})`,
      reply: {
        status: 502,
        headers: { "content-type": "text/plain" },
        body: `forward to the local app failed: ${cause}`,
      },
    };
  }
}

function checkedUrl(value: string, flag: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return url.toString();
  } catch {
    // reported below
  }
  throw new CliError(`${flag} must be an http(s) URL, got "${value}"`);
}

function remoteAddress(req: http.IncomingMessage): string {
  return (req.socket.remoteAddress ?? "unknown").replace(/^::ffff:/, "");
}
