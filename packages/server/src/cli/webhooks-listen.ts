import { once } from "node:events";
import http, { type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createWebhookHandler,
  WebhookSecretError,
  type WebhookEvent,
  type WebhookReply,
  type WebhookSignatureScheme,
} from "@parley/client";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { EXIT } from "./exit-codes.js";
import { parseChoice } from "./parse-choice.js";

export interface WebhooksListenOptions {
  port: string;
  host: string;
  /** Falls back to PARLEY_WEBHOOK_SECRET. */
  secret?: string;
  forwardTo?: string;
  /**
   * The signature schemes to accept, comma-separated: `standard-webhooks`, `parley`, or both (the
   * default). `standard-webhooks` alone never falls back to the timestamp-less parley header.
   */
  scheme?: string;
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
 * Parley retries what the app failed. Runs until interrupted.
 */
export async function webhooksListen(io: CliIo, options: WebhooksListenOptions): Promise<void> {
  const secret = options.secret ?? io.env.PARLEY_WEBHOOK_SECRET;
  if (!secret) throw new CliError("--secret is required (or set PARLEY_WEBHOOK_SECRET)");
  if (secret.length < SECRET_LENGTH.min || secret.length > SECRET_LENGTH.max)
    throw new CliError(
      `--secret must be ${SECRET_LENGTH.min} to ${SECRET_LENGTH.max} characters, as an endpoint's secret is (got ${secret.length}); use the secret the endpoint was created with`,
    );
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`--port must be a port number, got "${options.port}"`);
  }
  const forwardTo = options.forwardTo === undefined ? undefined : checkedUrl(options.forwardTo);
  const schemes = options.scheme === undefined ? undefined : parseSchemes(options.scheme);

  const handler = secretChecked(() =>
    createWebhookHandler({
      secret,
      ...(schemes === undefined ? {} : { schemes }),
      async onEvent(event, { req, rawBody }) {
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
        if (forwardTo === undefined) {
          io.out(options.json ? JSON.stringify(described) : line);
          return undefined;
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
  // With --json, stdout carries only events; the banner goes to stderr.
  const say = options.json ? io.err : io.out;
  say(`Listening for Parley webhooks on http://${host}:${address.port}/`);
  say(
    forwardTo === undefined
      ? "Verified events are printed and answered 204; forged ones are answered 401. Ctrl-C stops."
      : `Verified events are forwarded to ${forwardTo}; its status is answered back. Ctrl-C stops.`,
  );

  await new Promise<void>((resolve) => {
    const stop = () => {
      server.closeAllConnections();
      server.close(() => resolve());
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

const SCHEMES: readonly WebhookSignatureScheme[] = ["standard-webhooks", "parley"];

/** `--scheme` values: comma-separated `standard-webhooks` and `parley`. */
function parseSchemes(value: string): WebhookSignatureScheme[] {
  const schemes = value
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => parseChoice(part, SCHEMES, "--scheme"));
  if (schemes.length === 0) throw new CliError(`--scheme must name ${SCHEMES.join(" or ")}`);
  return [...new Set(schemes)];
}

/** The receiver, or a CliError when the secret gives no key (a `whsec_` secret that is not base64). */
function secretChecked<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof WebhookSecretError) throw new CliError(`--secret: ${error.message}`);
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

function checkedUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return url.toString();
  } catch {
    // reported below
  }
  throw new CliError(`--forward-to must be an http(s) URL, got "${value}"`);
}

function remoteAddress(req: http.IncomingMessage): string {
  return (req.socket.remoteAddress ?? "unknown").replace(/^::ffff:/, "");
}
