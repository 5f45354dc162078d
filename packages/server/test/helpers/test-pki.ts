import { execFileSync } from "node:child_process";
import { once } from "node:events";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface IssuedCertificate {
  cert: string;
  key: string;
}

export interface TestPki {
  /** The CA that signs the receiver's server certificate and the clients' certificates. */
  ca: IssuedCertificate;
  /** A server certificate for localhost / 127.0.0.1, signed by `ca`. */
  server: IssuedCertificate;
  /** A client certificate `CN=<cn>, O=Parley Test`, signed by `ca`; its key encrypted when asked. */
  client(cn: string, options?: { passphrase?: string }): IssuedCertificate;
}

/**
 * A private PKI made with the openssl CLI for mutual TLS tests: one CA, a server certificate and
 * client certificates on demand (EC P-256, valid 7 days).
 */
export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "parley-pki-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const openssl = (args: string[]) =>
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  let serial = 0;
  try {
    openssl([
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
      "/CN=Parley Test CA",
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
    ]);
    const issue = (name: string, subject: string, extensions: string, passphrase?: string) => {
      openssl([
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        subject,
        "-keyout",
        `${name}.key`,
        "-out",
        `${name}.csr`,
      ]);
      writeFileSync(join(dir, `${name}.ext`), extensions);
      openssl([
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-set_serial",
        String(++serial),
        "-days",
        "7",
        "-extfile",
        `${name}.ext`,
        "-out",
        `${name}.pem`,
      ]);
      if (passphrase !== undefined) {
        openssl([
          "pkcs8",
          "-topk8",
          "-in",
          `${name}.key`,
          "-out",
          `${name}.enc.key`,
          "-v2",
          "aes-256-cbc",
          "-passout",
          `pass:${passphrase}`,
        ]);
        return { cert: read(`${name}.pem`), key: read(`${name}.enc.key`) };
      }
      return { cert: read(`${name}.pem`), key: read(`${name}.key`) };
    };
    const ca = { cert: read("ca.pem"), key: read("ca.key") };
    const server = issue(
      "server",
      "/CN=localhost",
      "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    );
    const clients: IssuedCertificate[] = [];
    return {
      ca,
      server,
      client(cn, options = {}) {
        const issued = issue(
          `client${clients.length}`,
          `/O=Parley Test/CN=${cn}`,
          "extendedKeyUsage=clientAuth\n",
          options.passphrase,
        );
        clients.push(issued);
        return issued;
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

export interface MtlsRequest {
  /** The client certificate's CN, or null when the client sent none. */
  clientCn: string | null;
  /** 1 for the first TLS connection, 2 for the next, ...: shows which requests shared one. */
  connectionId: number;
  headers: Record<string, string | string[] | undefined>;
}

export interface MtlsReceiver {
  url: string;
  requests: MtlsRequest[];
  /** TLS connections accepted (handshakes completed). */
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * An HTTPS receiver that requires a client certificate signed by the PKI's CA (node:https with
 * requestCert and rejectUnauthorized), as an mTLS-protected ingress does. Answers 204.
 */
export async function startMtlsReceiver(pki: TestPki): Promise<MtlsReceiver> {
  const requests: MtlsRequest[] = [];
  const ids = new WeakMap<object, number>();
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = https.createServer(
    {
      key: pki.server.key,
      cert: pki.server.cert,
      ca: pki.ca.cert,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      requests.push({
        clientCn: peer && typeof peer.subject?.CN === "string" ? peer.subject.CN : null,
        connectionId: ids.get(socket) ?? 0,
        headers: req.headers,
      });
      req.resume();
      req.on("end", () => res.writeHead(204).end());
    },
  );
  server.on("secureConnection", (socket) => {
    ids.set(socket, ++connections);
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => undefined);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://localhost:${port}/hook`,
    requests,
    get connections() {
      return connections;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await closed;
    },
  };
}
