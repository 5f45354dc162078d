import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { createSecureContext } from "node:tls";
import type { EndpointTlsParams } from "@parley/client/wire";
import { AppError } from "../../errors/app-error.js";

/** An endpoint's `tls` as stored (sealed whole in `webhooks.tls_ciphertext`) and as sent with. */
export interface StoredTls {
  clientCertificatePem: string;
  clientKeyPem: string;
  passphrase: string | null;
  caPem: string | null;
}

/** What reads show of it, kept in the clear beside the sealed settings. */
export interface TlsSummary {
  subject: string;
  /** Epoch milliseconds: the certificate's notAfter. */
  expiresAt: number;
}

/** Generous: a certificate chain or a CA bundle of a few dozen certificates. */
export const TLS_PEM_MAX_CHARS = 256 * 1024;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function invalid(message: string, field: string): AppError {
  return new AppError("invalid_tls", message, { field: `body.tls.${field}` });
}

function certificatesIn(pem: string, field: string): X509Certificate[] {
  if (pem.length > TLS_PEM_MAX_CHARS)
    throw invalid(`tls.${field} must be at most ${TLS_PEM_MAX_CHARS} characters`, field);
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0)
    throw invalid(`tls.${field} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`, field);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw invalid(`certificate ${i + 1} of tls.${field} is not a valid X.509 certificate`, field);
    }
  });
}

/** "CN=parley, O=Example": Node's one-attribute-per-line subject on one line. */
function oneLine(distinguishedName: string): string {
  return distinguishedName.split("\n").filter(Boolean).join(", ");
}

/**
 * Checks `tls` as given on create or PATCH: the certificate parses, the key parses (with the
 * passphrase when it is encrypted) and is the certificate's, and the CA parses. Any failure is 400
 * invalid_tls with what is wrong and never a PEM or the passphrase. Answers what to store and
 * what reads show.
 */
export function validateTls(input: EndpointTlsParams): { stored: StoredTls; summary: TlsSummary } {
  const [certificate] = certificatesIn(input.clientCertificatePem, "clientCertificatePem") as [
    X509Certificate,
  ];
  if (input.clientKeyPem.length > TLS_PEM_MAX_CHARS)
    throw invalid(
      `tls.clientKeyPem must be at most ${TLS_PEM_MAX_CHARS} characters`,
      "clientKeyPem",
    );
  const passphrase = input.passphrase ?? null;
  let key: KeyObject;
  try {
    key = createPrivateKey({
      key: input.clientKeyPem,
      format: "pem",
      ...(passphrase === null ? {} : { passphrase }),
    });
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    const encrypted = /ENCRYPTED/.test(input.clientKeyPem);
    throw invalid(
      encrypted && passphrase === null
        ? "tls.clientKeyPem is encrypted: give its passphrase"
        : encrypted || /BAD_DECRYPT|INTERRUPTED_OR_CANCELLED/.test(code)
          ? "tls.clientKeyPem could not be decrypted with this passphrase"
          : "tls.clientKeyPem is not a valid PEM private key",
      encrypted && passphrase !== null ? "passphrase" : "clientKeyPem",
    );
  }
  if (!certificate.checkPrivateKey(key))
    throw invalid(
      "tls.clientKeyPem is not the private key of tls.clientCertificatePem",
      "clientKeyPem",
    );
  const caPem = input.caPem ?? null;
  if (caPem !== null) certificatesIn(caPem, "caPem");
  try {
    // What the sender will do with them: refuse here what the TLS stack would refuse there.
    createSecureContext({
      cert: input.clientCertificatePem,
      key: input.clientKeyPem,
      ...(passphrase === null ? {} : { passphrase }),
      ...(caPem === null ? {} : { ca: caPem }),
    });
  } catch (error) {
    throw invalid(
      `the TLS settings are refused by the TLS stack: ${(error as Error).message}`,
      "clientCertificatePem",
    );
  }
  return {
    stored: {
      clientCertificatePem: input.clientCertificatePem,
      clientKeyPem: input.clientKeyPem,
      passphrase,
      caPem,
    },
    summary: {
      subject: oneLine(certificate.subject),
      expiresAt: new Date(certificate.validTo).getTime(),
    },
  };
}
