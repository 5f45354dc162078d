import { readFileSync } from "node:fs";
import {
  EVENT_NAMES,
  paginate,
  type RequestInterface,
  type UpdateWebhookParams,
} from "@parley/client";
import { ORDERINGS, PAYLOAD_FORMATS, SIGNATURE_SCHEMES } from "@parley/client/wire";
import type { Command } from "commander";
import { CliError } from "./cli-error.js";
import { EXIT } from "./exit-codes.js";
import { parseChoice, parseEvents } from "./parse-choice.js";

/**
 * What `webhooks create` and `webhooks update` share: one flag per endpoint setting, and
 * `--from-file` for a JSON body with any of them (the API's fields, as in docs/webhooks.md); a flag
 * given wins over the file's field.
 */
export interface EndpointSettingOptions {
  fromFile?: string;
  name?: string;
  url?: string;
  /** Comma-separated, repeatable: names, `*` or wildcards such as `MESSAGE_*`. */
  events?: string[];
  secret?: string;
  scheme?: string;
  /** Comma-separated, repeatable: room ids or names; `all` clears the filter. */
  rooms?: string[];
  /** `Name: value`, repeatable. */
  header?: string[];
  clearHeaders?: boolean;
  /** Attempts per second, or `none`. */
  rateLimit?: string;
  ordering?: string;
  payloadFormat?: string;
  traceContext?: boolean;
  /** basic, bearer, oauth2 or none. */
  auth?: string;
  authUsername?: string;
  authPassword?: string;
  authToken?: string;
  tokenUrl?: string;
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  audience?: string;
  /** Paths of PEM files. */
  clientCert?: string;
  clientKey?: string;
  keyPassphrase?: string;
  ca?: string;
  /** --no-tls: false. */
  tls?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The setting flags, on `create` (`required`: name, url and events, unless in the file) or `update`. */
export function addEndpointSettingFlags(command: Command, mode: "create" | "update"): Command {
  const creating = mode === "create";
  return command
    .option(
      "--from-file <path>",
      "a JSON object with any of the endpoint's fields, as the API takes them (- reads stdin); flags win over it",
    )
    .option("--name <name>", `label shown in the delivery log${creating ? " (required)" : ""}`)
    .option("--url <url>", `the receiver's https URL${creating ? " (required)" : ""}`)
    .option(
      "--events <names>",
      `${creating ? "" : "replace the events: "}comma-separated, repeatable: * (every event, later ones included), a prefix wildcard such as MESSAGE_*, or names: ${EVENT_NAMES.join(", ")}${creating ? " (required)" : ""}`,
      collect,
    )
    .option(
      "--secret <secret>",
      creating
        ? "HMAC key, 16 to 1024 characters (generated and shown once if omitted)"
        : "a new HMAC key, 16 to 1024 characters",
    )
    .option("--scheme <scheme>", `how deliveries are signed: ${SIGNATURE_SCHEMES.join(", ")}`)
    .option(
      "--rooms <rooms>",
      "only events of these rooms (events without a room pass): ids or names, comma-separated, repeatable; all: every room",
      collect,
    )
    .option(
      "--header <header>",
      `an extra request header, "Name: value", repeatable (up to 10; ${creating ? "" : "replaces the whole set; "}values are shown masked)`,
      collect,
    )
    .option("--clear-headers", "send no extra headers")
    .option(
      "--rate-limit <perSecond>",
      "at most this many attempts per second to the endpoint, 1 to 10000, all processes together; none: no cap",
    )
    .option(
      "--ordering <ordering>",
      "none (default), room (each room's events in order, one in flight per room) or endpoint (one lane)",
    )
    .option(
      "--payload-format <format>",
      `${PAYLOAD_FORMATS.join(", ")}: Parley's envelope (default), CloudEvents structured or binary mode`,
    )
    .option("--trace-context", "send a W3C traceparent continuing the trace that caused the event")
    .option("--no-trace-context", "send no trace context")
    .option(
      "--auth <type>",
      "how Parley authenticates to the receiver: basic, bearer, oauth2 (client credentials) or none",
    )
    .option("--auth-username <name>", "basic: the user name")
    .option("--auth-password <password>", `basic: the password (${FROM_ENV})`)
    .option("--auth-token <token>", `bearer: the token (${FROM_ENV})`)
    .option("--token-url <url>", "oauth2: the token endpoint")
    .option("--client-id <id>", "oauth2: the client id")
    .option("--client-secret <secret>", `oauth2: the client secret (${FROM_ENV})`)
    .option("--scope <scope>", "oauth2: the scope asked for (space-separated)")
    .option("--audience <audience>", "oauth2: the audience form parameter")
    .option("--client-cert <file>", "mutual TLS: the client certificate (PEM file)")
    .option("--client-key <file>", "mutual TLS: its private key (PEM file)")
    .option("--key-passphrase <passphrase>", `mutual TLS: the key's passphrase (${FROM_ENV})`)
    .option("--ca <file>", "mutual TLS: CA certificates (PEM file) trusted for this receiver")
    .option("--no-tls", "remove the client certificate");
}

/** Credentials on a command line show in `ps` and shell history: `env:NAME` reads them instead. */
const FROM_ENV = "or env:NAME to read it from that environment variable";

function credentialOf(value: string, flag: string, env: NodeJS.ProcessEnv): string {
  if (!value.startsWith("env:")) return value;
  const name = value.slice(4);
  const found = env[name];
  if (found === undefined || found === "")
    throw new CliError(`${flag} env:${name}: the environment variable ${name} is not set`);
  return found;
}

function pemFile(path: string, flag: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new CliError(`${flag}: cannot read ${path}: ${(error as Error).message}`);
  }
}

const AUTH_FLAGS = [
  ["authUsername", "username", "--auth-username"],
  ["authPassword", "password", "--auth-password"],
  ["authToken", "token", "--auth-token"],
  ["tokenUrl", "tokenUrl", "--token-url"],
  ["clientId", "clientId", "--client-id"],
  ["clientSecret", "clientSecret", "--client-secret"],
  ["scope", "scope", "--scope"],
  ["audience", "audience", "--audience"],
] as const;
const CREDENTIAL_FIELDS = new Set(["password", "token", "clientSecret"]);

/**
 * `auth` from the flags, on top of the file's: `--auth` sets the type (or none), each other flag
 * one field; the server checks the fields against the type (invalid_auth).
 */
function authFrom(
  options: EndpointSettingOptions,
  fromFile: UpdateWebhookParams["auth"],
  env: NodeJS.ProcessEnv,
): UpdateWebhookParams["auth"] {
  const given = AUTH_FLAGS.filter(([flag]) => options[flag] !== undefined);
  if (options.auth === undefined && given.length === 0) return fromFile;
  if (options.auth?.toLowerCase() === "none") {
    if (given.length > 0) throw new CliError("--auth none takes no other --auth-* flags");
    return null;
  }
  const type =
    options.auth === undefined
      ? fromFile?.type
      : parseChoice(options.auth.toLowerCase(), ["basic", "bearer", "oauth2"] as const, "--auth");
  if (type === undefined)
    throw new CliError("--auth basic|bearer|oauth2 is needed with the --auth-* flags");
  const auth: Record<string, string | null> = fromFile?.type === type ? { ...fromFile } : {};
  auth.type = type;
  for (const [flag, field, spelled] of given) {
    const value = options[flag]!;
    auth[field] = CREDENTIAL_FIELDS.has(field) ? credentialOf(value, spelled, env) : value;
  }
  return auth as UpdateWebhookParams["auth"];
}

/** `tls` from the flags (files read here), on top of the file's; --no-tls removes it. */
function tlsFrom(
  options: EndpointSettingOptions,
  fromFile: UpdateWebhookParams["tls"],
  env: NodeJS.ProcessEnv,
): UpdateWebhookParams["tls"] {
  const any =
    options.clientCert !== undefined ||
    options.clientKey !== undefined ||
    options.keyPassphrase !== undefined ||
    options.ca !== undefined;
  if (options.tls === false) {
    if (any)
      throw new CliError("--no-tls takes no --client-cert, --client-key, --key-passphrase or --ca");
    return null;
  }
  if (!any) return fromFile;
  const tls = { ...(fromFile ?? {}) } as Record<string, string | null>;
  if (options.clientCert !== undefined)
    tls.clientCertificatePem = pemFile(options.clientCert, "--client-cert");
  if (options.clientKey !== undefined)
    tls.clientKeyPem = pemFile(options.clientKey, "--client-key");
  if (options.keyPassphrase !== undefined)
    tls.passphrase = credentialOf(options.keyPassphrase, "--key-passphrase", env);
  if (options.ca !== undefined) tls.caPem = pemFile(options.ca, "--ca");
  if (tls.clientCertificatePem === undefined || tls.clientKeyPem === undefined)
    throw new CliError("mutual TLS needs both --client-cert and --client-key");
  return tls as unknown as UpdateWebhookParams["tls"];
}

/**
 * The API body the flags and the file describe, without `enabled` and `secret` (each command
 * decides those). Room names are looked up through the API.
 */
export async function endpointSettingsFrom(
  options: EndpointSettingOptions,
  api: () => RequestInterface,
  readStdin: () => string = () => readFileSync(0, "utf8"),
  env: NodeJS.ProcessEnv = process.env,
): Promise<UpdateWebhookParams> {
  const body: UpdateWebhookParams =
    options.fromFile === undefined ? {} : readBodyFile(options.fromFile, readStdin);
  if (options.name !== undefined) body.name = options.name;
  if (options.url !== undefined) body.url = options.url;
  if (options.events !== undefined) body.events = parseEvents(options.events);
  if (options.secret !== undefined) body.secret = options.secret;
  if (options.scheme !== undefined)
    body.signatureScheme = parseChoice(options.scheme, SIGNATURE_SCHEMES, "--scheme");
  if (options.rooms !== undefined) body.roomIds = await parseRooms(options.rooms, api);
  if (options.header !== undefined && options.clearHeaders)
    throw new CliError("--header and --clear-headers cannot be given together");
  if (options.header !== undefined) body.headers = parseHeaders(options.header);
  if (options.clearHeaders) body.headers = null;
  if (options.rateLimit !== undefined) body.maxDeliveriesPerSecond = parseRate(options.rateLimit);
  if (options.ordering !== undefined)
    body.ordering = parseChoice(options.ordering, ORDERINGS, "--ordering");
  if (options.payloadFormat !== undefined)
    body.payloadFormat = parseChoice(options.payloadFormat, PAYLOAD_FORMATS, "--payload-format");
  if (options.traceContext !== undefined) body.traceContext = options.traceContext;
  const auth = authFrom(options, body.auth, env);
  if (auth !== undefined) body.auth = auth;
  const tls = tlsFrom(options, body.tls, env);
  if (tls !== undefined) body.tls = tls;
  return body;
}

/** A JSON object from a file (or stdin for `-`); the server checks its fields. */
function readBodyFile(path: string, readStdin: () => string): UpdateWebhookParams {
  let text: string;
  try {
    text = path === "-" ? readStdin() : readFileSync(path, "utf8");
  } catch (error) {
    throw new CliError(`--from-file: cannot read ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--from-file: ${path} is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new CliError(`--from-file: ${path} must hold a JSON object of endpoint fields`);
  return parsed as UpdateWebhookParams;
}

function parseHeaders(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const colon = value.indexOf(":");
    const name = colon < 0 ? "" : value.slice(0, colon).trim();
    if (name === "")
      throw new CliError(`--header must be "Name: value", got "${value.replace(/:.*/s, ":…")}"`);
    headers[name] = value.slice(colon + 1).trim();
  }
  return headers;
}

function parseRate(value: string): number | null {
  const text = value.trim().toLowerCase();
  if (text === "none") return null;
  const rate = Number(text);
  if (!/^\d+$/.test(text) || rate < 1 || rate > 10_000)
    throw new CliError(
      `--rate-limit must be a whole number from 1 to 10000, or none; got "${value}"`,
    );
  return rate;
}

/**
 * Room ids, and room names (`#general` or `general`, any case) looked up through the admin
 * rooms list; `all` alone means every room (null).
 */
async function parseRooms(
  values: readonly string[],
  api: () => RequestInterface,
): Promise<number[] | null> {
  const entries = values
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter(Boolean);
  if (entries.length === 1 && entries[0]!.toLowerCase() === "all") return null;
  if (entries.length === 0) throw new CliError("--rooms must name at least one room, or all");
  const ids: number[] = [];
  for (const entry of entries) {
    if (/^[1-9]\d{0,15}$/.test(entry)) {
      ids.push(Number(entry));
      continue;
    }
    const name = entry.replace(/^#/, "");
    const rooms = await paginate.all(api(), "GET /api/admin/rooms", {
      query: name,
      kind: "room",
      limit: 200,
    });
    const found = rooms.find((room) => room.name?.toLowerCase() === name.toLowerCase());
    if (found === undefined)
      throw new CliError(`--rooms: no room named "${entry}"`, {
        exitCode: EXIT.notFound,
        code: "not_found",
      });
    ids.push(found.id);
  }
  return [...new Set(ids)];
}
