import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { AntivirusScanner, ScanVerdict } from "./antivirus-scanner.js";
import { Sha256BlocklistError } from "./sha256-blocklist-error.js";

const NAME = "builtin";
const EICAR = Buffer.from(
  "X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*",
  "latin1",
);
// eicar.org: the 68-byte string may be followed by whitespace (space, tab, LF, CR, Ctrl-Z) as
// long as the whole file stays within 128 bytes.
const EICAR_MAX_BYTES = 128;
const EICAR_PADDING = new Set([0x20, 0x09, 0x0a, 0x0d, 0x1a]);
const SHA256_HEX = /^[0-9a-f]{64}$/;

function isEicar(bytes: Uint8Array): boolean {
  if (bytes.length < EICAR.length || bytes.length > EICAR_MAX_BYTES) return false;
  if (!EICAR.equals(bytes.subarray(0, EICAR.length))) return false;
  return bytes.subarray(EICAR.length).every((byte) => EICAR_PADDING.has(byte));
}

function normaliseHash(hash: string): string | null {
  const lower = hash.trim().toLowerCase();
  return SHA256_HEX.test(lower) ? lower : null;
}

/**
 * Reads a block list: one hex SHA-256 per line; blank lines and `#` comments (whole-line or
 * trailing) are ignored. Throws Sha256BlocklistError naming the first bad line.
 */
export function loadSha256Blocklist(file: string): Set<string> {
  let source: string;
  try {
    source = readFileSync(file, "utf8");
  } catch (error) {
    throw new Sha256BlocklistError(file, null, `cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const hashes = new Set<string>();
  source.split(/\r?\n/).forEach((line, index) => {
    const entry = line.replace(/#.*/, "").trim();
    if (entry === "") return;
    const hash = normaliseHash(entry);
    if (hash === null) {
      throw new Sha256BlocklistError(
        file,
        index + 1,
        `"${entry.length > 80 ? `${entry.slice(0, 80)}...` : entry}" is not a hex SHA-256 (64 hex digits)`,
      );
    }
    hashes.add(hash);
  });
  return hashes;
}

/**
 * The scanner that needs nothing installed: it recognises the EICAR test file and any file whose
 * SHA-256 is on the block list. Hashes may be given in either case.
 */
export function createBuiltinScanner(
  options: { sha256Blocklist?: Iterable<string> } = {},
): AntivirusScanner {
  const blocklist = new Set<string>();
  for (const hash of options.sha256Blocklist ?? []) {
    const normalised = normaliseHash(hash);
    if (normalised === null) throw new TypeError(`not a hex SHA-256: "${hash}"`);
    blocklist.add(normalised);
  }
  return {
    name: NAME,
    async scan(bytes): Promise<ScanVerdict> {
      if (isEicar(bytes)) return { infected: true, scanner: NAME, signature: "EICAR-Test-File" };
      if (blocklist.size > 0) {
        const hash = createHash("sha256").update(bytes).digest("hex");
        if (blocklist.has(hash)) {
          return { infected: true, scanner: NAME, signature: `SHA256-Blocklist:${hash}` };
        }
      }
      return { infected: false, scanner: NAME };
    },
  };
}
