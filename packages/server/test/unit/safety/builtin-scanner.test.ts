import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createBuiltinScanner,
  loadSha256Blocklist,
} from "../../../src/safety/antivirus/builtin-scanner.js";
import { Sha256BlocklistError } from "../../../src/safety/antivirus/sha256-blocklist-error.js";

// Split so that scanners on developer machines do not quarantine this test file.
const EICAR = "X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR" + "-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";
const bytes = (text: string) => new TextEncoder().encode(text);
const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

const dir = mkdtempSync(join(tmpdir(), "parley-av-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("createBuiltinScanner", () => {
  const scanner = createBuiltinScanner();

  it("is named builtin", () => {
    expect(scanner.name).toBe("builtin");
  });

  it("detects the 68-byte EICAR test file", async () => {
    expect(EICAR).toHaveLength(68);
    await expect(scanner.scan(bytes(EICAR))).resolves.toEqual({
      infected: true,
      scanner: "builtin",
      signature: "EICAR-Test-File",
    });
  });

  it("detects EICAR followed by allowed whitespace up to 128 bytes", async () => {
    const padded = EICAR + "\r\n\t \x1a".repeat(12);
    expect(padded).toHaveLength(128);
    await expect(scanner.scan(bytes(padded))).resolves.toMatchObject({ infected: true });
  });

  it("does not call a file EICAR when it is longer than 128 bytes", async () => {
    await expect(scanner.scan(bytes(EICAR + " ".repeat(61)))).resolves.toEqual({
      infected: false,
      scanner: "builtin",
    });
  });

  it("does not call a file EICAR when other content follows the string", async () => {
    await expect(scanner.scan(bytes(EICAR + "\nhello"))).resolves.toMatchObject({
      infected: false,
    });
  });

  it("does not call a file EICAR when the string is not at the start", async () => {
    await expect(scanner.scan(bytes(" " + EICAR))).resolves.toMatchObject({ infected: false });
  });

  it("passes a clean file and an empty file", async () => {
    await expect(scanner.scan(bytes("quarterly report\n"))).resolves.toEqual({
      infected: false,
      scanner: "builtin",
    });
    await expect(scanner.scan(new Uint8Array())).resolves.toMatchObject({ infected: false });
  });

  it("flags a file whose SHA-256 is on the block list, naming the hash", async () => {
    const file = bytes("known bad payload");
    const hash = sha256(file);
    const blocking = createBuiltinScanner({ sha256Blocklist: [hash.toUpperCase()] });
    await expect(blocking.scan(file)).resolves.toEqual({
      infected: true,
      scanner: "builtin",
      signature: `SHA256-Blocklist:${hash}`,
    });
    await expect(blocking.scan(bytes("known bad payload."))).resolves.toMatchObject({
      infected: false,
    });
  });

  it("refuses a block list entry that is not a SHA-256", () => {
    expect(() => createBuiltinScanner({ sha256Blocklist: ["abc123"] })).toThrow(/abc123/);
  });
});

describe("loadSha256Blocklist", () => {
  const a = sha256(bytes("a"));
  const b = sha256(bytes("b"));

  it("reads one hash per line, ignoring comments and blank lines, in any case", () => {
    const file = join(dir, "ok.txt");
    writeFileSync(file, `# known bad files\n${a}\n\n  ${b.toUpperCase()}  # sample 2\r\n`);
    expect(loadSha256Blocklist(file)).toEqual(new Set([a, b]));
  });

  it("names the line of an entry that is not a SHA-256", () => {
    const file = join(dir, "bad.txt");
    writeFileSync(file, `${a}\n# comment\nnot-a-hash\n`);
    let error: unknown;
    try {
      loadSha256Blocklist(file);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(Sha256BlocklistError);
    expect(error).toMatchObject({ code: "invalid_av_blocklist", file, line: 3 });
    expect((error as Error).message).toBe(
      `SHA-256 block list ${file} line 3: "not-a-hash" is not a hex SHA-256 (64 hex digits)`,
    );
  });

  it("rejects a hash of the wrong length", () => {
    const file = join(dir, "short.txt");
    writeFileSync(file, `${a.slice(1)}\n`);
    expect(() => loadSha256Blocklist(file)).toThrow(/line 1/);
  });

  it("reports a file that cannot be read", () => {
    const file = join(dir, "missing.txt");
    expect(() => loadSha256Blocklist(file)).toThrow(
      expect.objectContaining({ code: "invalid_av_blocklist", line: null }),
    );
    expect(() => loadSha256Blocklist(file)).toThrow(/missing\.txt: cannot be read/);
  });
});
