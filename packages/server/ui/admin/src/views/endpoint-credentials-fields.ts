// The endpoint form's receiver credentials: `auth` (HTTP Basic, a bearer token, OAuth 2.0 client
// credentials) and `tls` (a client certificate). Every credential is write-only: an edit shows it
// masked as the API answers it, and an empty field keeps the stored value.
import type {
  EndpointAuth,
  EndpointAuthParams,
  EndpointTls,
  EndpointTlsParams,
} from "@parley/client/browser";
import { h } from "../dom.js";

type AuthType = "none" | EndpointAuth["type"];

export interface CredentialChanges {
  auth?: EndpointAuthParams | null;
  tls?: EndpointTlsParams | null;
}

/**
 * The credential fields of the endpoint form. `read()` answers the changes to send (only what was
 * changed; on create, what was filled in) or a message saying what is missing.
 */
export function credentialFields(
  prefix: string,
  current: { auth: EndpointAuth | null; tls: EndpointTls | null } | undefined,
): { element: HTMLElement; read(): CredentialChanges | string } {
  const stored = current?.auth ?? null;
  const storedType: AuthType = stored?.type ?? "none";
  const id = (name: string) => `${prefix}-auth-${name}`;
  const text = (name: string, value?: string | null, placeholder?: string) =>
    h("input", {
      id: id(name),
      autocomplete: "off",
      spellcheck: "false",
      value: value ?? undefined,
      ...(placeholder === undefined ? {} : { placeholder }),
    });
  // Write-only: never filled in, the masked value as a placeholder.
  const secret = (name: string, masked: string | undefined) =>
    h("input", {
      id: id(name),
      type: "password",
      autocomplete: "new-password",
      placeholder: masked === undefined ? "" : `unchanged (${masked})`,
    });
  const type = h(
    "select",
    { id: id("type"), name: "authType", "aria-describedby": id("hint") },
    (
      [
        ["none", "None"],
        ["basic", "HTTP Basic (user name and password)"],
        ["bearer", "Bearer token"],
        ["oauth2", "OAuth 2.0 client credentials"],
      ] as const
    ).map(([value, label]) => h("option", { value, selected: storedType === value }, label)),
  );
  const username = text("username", stored?.type === "basic" ? stored.username : undefined);
  const password = secret("password", stored?.type === "basic" ? stored.password : undefined);
  const token = secret("token", stored?.type === "bearer" ? stored.token : undefined);
  const tokenUrl = text(
    "token-url",
    stored?.type === "oauth2" ? stored.tokenUrl : undefined,
    "https://idp.example.com/oauth2/token",
  );
  const clientId = text("client-id", stored?.type === "oauth2" ? stored.clientId : undefined);
  const clientSecret = secret(
    "client-secret",
    stored?.type === "oauth2" ? stored.clientSecret : undefined,
  );
  const scope = text("scope", stored?.type === "oauth2" ? stored.scope : undefined, "optional");
  const audience = text(
    "audience",
    stored?.type === "oauth2" ? stored.audience : undefined,
    "optional",
  );
  const field = (label: string, input: HTMLInputElement) =>
    h("span", { class: "field" }, h("label", { for: input.id }, label), input);
  const groups: Record<Exclude<AuthType, "none">, HTMLElement> = {
    basic: h(
      "div",
      { class: "auth-fields" },
      field("User name", username),
      field("Password", password),
    ),
    bearer: h("div", { class: "auth-fields" }, field("Token", token)),
    oauth2: h(
      "div",
      { class: "auth-fields" },
      field("Token URL", tokenUrl),
      field("Client ID", clientId),
      field("Client secret", clientSecret),
      field("Scope", scope),
      field("Audience", audience),
    ),
  };
  const showGroup = () => {
    for (const [name, group] of Object.entries(groups)) group.hidden = type.value !== name;
  };
  type.addEventListener("change", showGroup);
  showGroup();

  const tlsCurrent = current?.tls ?? null;
  const area = (name: string, placeholder: string) =>
    h("textarea", {
      id: `${prefix}-tls-${name}`,
      rows: 3,
      spellcheck: "false",
      autocomplete: "off",
      placeholder,
    });
  const cert = area("certificate", "-----BEGIN CERTIFICATE-----");
  const key = area("key", "-----BEGIN PRIVATE KEY----- (write-only)");
  const passphrase = h("input", {
    id: `${prefix}-tls-passphrase`,
    type: "password",
    autocomplete: "new-password",
    placeholder: "only for an encrypted key",
  });
  const ca = area("ca", "optional: CA certificates trusted for this receiver");
  const remove = h("input", { id: `${prefix}-tls-remove`, type: "checkbox" });
  const tlsHint = `${prefix}-tls-hint`;

  const element = h(
    "fieldset",
    { class: "credentials" },
    h("legend", null, "Receiver authentication"),
    h("label", { for: type.id }, "Authorization"),
    type,
    h(
      "small",
      { id: id("hint"), class: "hint" },
      "Sets the Authorization header of every delivery (a custom Authorization header is then not allowed). Passwords, tokens and secrets are never shown again; leave one empty to keep it.",
    ),
    Object.values(groups),
    h(
      "fieldset",
      { class: "tls", "aria-describedby": tlsHint },
      h("legend", null, "Client certificate (mutual TLS)"),
      h(
        "small",
        { id: tlsHint, class: "hint" },
        tlsCurrent === null
          ? "Presented to receivers that require one. Paste the certificate and its private key (PEM)."
          : `Current: ${tlsCurrent.subject}, expires ${tlsCurrent.expiresAt.slice(0, 10)}. Paste a new certificate and key to replace it.`,
      ),
      h("label", { for: cert.id }, "Certificate (PEM)"),
      cert,
      h("label", { for: key.id }, "Private key (PEM)"),
      key,
      h("label", { for: passphrase.id }, "Key passphrase"),
      passphrase,
      h("label", { for: ca.id }, "Extra CA (PEM)"),
      ca,
      tlsCurrent === null
        ? null
        : h("label", { class: "check", for: remove.id }, remove, "Remove the client certificate"),
    ),
  );

  return {
    element,
    read() {
      const changes: CredentialChanges = {};
      const chosen = type.value as AuthType;
      const value = (input: HTMLInputElement) => input.value.trim();
      const sameType = chosen === storedType;
      // A write-only field left empty keeps the stored value (same type, on an edit).
      const need = (input: HTMLInputElement, label: string): string | undefined => {
        if (input.value !== "") return input.value;
        if (sameType && current !== undefined) return undefined;
        throw new Error(`Receiver authentication: type the ${label}.`);
      };
      try {
        if (chosen === "none") {
          if (stored !== null) changes.auth = null;
        } else if (chosen === "basic") {
          const pass = need(password, "password");
          if (
            !sameType ||
            value(username) !== (stored?.type === "basic" ? stored.username : "") ||
            pass !== undefined
          )
            changes.auth = {
              type: "basic",
              username: value(username),
              ...(pass === undefined ? {} : { password: pass }),
            };
        } else if (chosen === "bearer") {
          const bearer = need(token, "token");
          if (!sameType || bearer !== undefined)
            changes.auth = { type: "bearer", ...(bearer === undefined ? {} : { token: bearer }) };
        } else {
          const secretValue = need(clientSecret, "client secret");
          const next = {
            type: "oauth2" as const,
            tokenUrl: value(tokenUrl),
            clientId: value(clientId),
            scope: value(scope) === "" ? null : value(scope),
            audience: value(audience) === "" ? null : value(audience),
          };
          const before =
            stored?.type === "oauth2"
              ? {
                  type: "oauth2",
                  tokenUrl: stored.tokenUrl,
                  clientId: stored.clientId,
                  scope: stored.scope,
                  audience: stored.audience,
                }
              : null;
          if (JSON.stringify(next) !== JSON.stringify(before) || secretValue !== undefined)
            changes.auth = {
              ...next,
              ...(secretValue === undefined ? {} : { clientSecret: secretValue }),
            };
        }
      } catch (missing) {
        return (missing as Error).message;
      }
      if (remove.checked) {
        changes.tls = null;
      } else if (cert.value.trim() !== "" || key.value.trim() !== "") {
        if (cert.value.trim() === "" || key.value.trim() === "")
          return "Client certificate: paste both the certificate and its private key.";
        changes.tls = {
          clientCertificatePem: cert.value,
          clientKeyPem: key.value,
          ...(passphrase.value === "" ? {} : { passphrase: passphrase.value }),
          ...(ca.value.trim() === "" ? {} : { caPem: ca.value }),
        };
      }
      return changes;
    },
  };
}
