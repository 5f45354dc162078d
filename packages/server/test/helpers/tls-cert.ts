import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let cached: { key: string; cert: string } | undefined;

/**
 * A self-signed certificate for localhost, 127.0.0.1 and ::1 (and receiver.parley.test, a name the
 * SSRF tests resolve to 127.0.0.1 themselves), made once per test process with the openssl CLI.
 * Trust it by passing `cert` as a CA (it signs itself).
 */
export function selfSignedCert(): { key: string; cert: string } {
  if (cached !== undefined) return cached;
  const dir = mkdtempSync(join(tmpdir(), "parley-tls-"));
  try {
    const keyFile = join(dir, "key.pem");
    const certFile = join(dir, "cert.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "7",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost,DNS:receiver.parley.test,IP:127.0.0.1,IP:::1",
        "-keyout",
        keyFile,
        "-out",
        certFile,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    cached = { key: readFileSync(keyFile, "utf8"), cert: readFileSync(certFile, "utf8") };
    return cached;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
