/**
 * How an outbound endpoint authenticates to its receiver: `auth` (HTTP Basic, a bearer token or
 * OAuth 2.0 client credentials) and `tls` (a client certificate for mutual TLS). Every credential
 * is write-only: answers show it masked.
 */
import { Type } from "@sinclair/typebox";
import { Nullable, StringEnum, Timestamp } from "./common.js";

export const AUTH_TYPES = ["basic", "bearer", "oauth2"] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

/** `auth` as written: the fields of its `type` (the server answers 400 invalid_auth otherwise). */
export type EndpointAuthParams =
  | { type: "basic"; username: string; password?: string }
  | { type: "bearer"; token?: string }
  | {
      type: "oauth2";
      tokenUrl: string;
      clientId: string;
      clientSecret?: string;
      scope?: string | null;
      audience?: string | null;
    };

/** `auth` as answered: write-only parts masked ("****" and at most the last 4 characters). */
export type EndpointAuth =
  | { type: "basic"; username: string; password: string }
  | { type: "bearer"; token: string }
  | {
      type: "oauth2";
      tokenUrl: string;
      clientId: string;
      clientSecret: string;
      scope: string | null;
      audience: string | null;
    };

const authProperties = {
  type: StringEnum(AUTH_TYPES),
  username: Type.String(),
  password: Type.String(),
  token: Type.String(),
  tokenUrl: Type.String(),
  clientId: Type.String(),
  clientSecret: Type.String(),
  scope: Nullable(Type.String()),
  audience: Nullable(Type.String()),
};

/** The `auth` field of create and PATCH. */
export const EndpointAuthParamsSchema = Type.Unsafe<EndpointAuthParams | null>({
  type: ["object", "null"],
  properties: authProperties,
  required: ["type"],
  additionalProperties: false,
  description:
    'null (default), {type: "basic", username, password}, {type: "bearer", token} or {type: "oauth2", tokenUrl, clientId, clientSecret, scope?, audience?} (OAuth 2.0 client credentials, client_secret_basic; tokenUrl under the same address rules as url). Write-only parts are never returned; on PATCH with the same type, an omitted password, token or clientSecret keeps the stored one.',
});

/** The `auth` field of an endpoint. */
export const EndpointAuthSchema = Type.Unsafe<EndpointAuth | null>({
  type: ["object", "null"],
  properties: authProperties,
  required: ["type"],
  additionalProperties: false,
  description:
    "null, or the auth settings with password, token and clientSecret masked (**** and at most their last 4 characters).",
});

export interface EndpointTlsParams {
  /** PEM: the client certificate (its chain may follow). */
  clientCertificatePem: string;
  /** PEM: its private key, encrypted with `passphrase` or not. Write-only. */
  clientKeyPem: string;
  /** Write-only. */
  passphrase?: string | null;
  /** PEM: CA certificates trusted for this receiver, besides the system's. */
  caPem?: string | null;
}

/** The `tls` field of create and PATCH: null, or the whole set (it replaces the stored one). */
export const EndpointTlsParamsSchema = Type.Unsafe<EndpointTlsParams | null>({
  type: ["object", "null"],
  properties: {
    clientCertificatePem: Type.String(),
    clientKeyPem: Type.String(),
    passphrase: Nullable(Type.String()),
    caPem: Nullable(Type.String()),
  },
  required: ["clientCertificatePem", "clientKeyPem"],
  additionalProperties: false,
  description:
    "null (default) or a client certificate for mutual TLS: {clientCertificatePem, clientKeyPem, passphrase?, caPem?}. Invalid PEM or a key that does not match the certificate: 400 invalid_tls. The key and passphrase are write-only.",
});

/** The `tls` field of an endpoint: what identifies the certificate, never the key. */
export interface EndpointTls {
  /** The certificate's subject, e.g. "CN=parley-client, O=Example". */
  subject: string;
  /** When the certificate stops being valid. */
  expiresAt: string;
}

export const EndpointTlsSchema = Type.Unsafe<EndpointTls | null>({
  type: ["object", "null"],
  properties: { subject: Type.String(), expiresAt: Timestamp() },
  required: ["subject", "expiresAt"],
  additionalProperties: false,
  description: "null, or the client certificate's subject and end of validity.",
});
