import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { endpoint, VERSION } from "../src/index.js";

describe("VERSION", () => {
  it("equals package.json's version", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
  });

  it("is in the default user-agent", () => {
    expect(endpoint.DEFAULTS.headers["user-agent"]).toBe(`parley-endpoint/${VERSION}`);
  });
});

describe("scripts/sync-version.mjs", () => {
  it("writes package.json's version into src/version.ts", () => {
    const here = fileURLToPath(new URL("..", import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), "parley-endpoint-version-"));
    try {
      mkdirSync(join(dir, "src"));
      mkdirSync(join(dir, "scripts"));
      cpSync(join(here, "src/version.ts"), join(dir, "src/version.ts"));
      cpSync(join(here, "scripts/sync-version.mjs"), join(dir, "scripts/sync-version.mjs"));
      writeFileSync(join(dir, "package.json"), JSON.stringify({ version: "2.3.4-rc.1" }));
      execFileSync(process.execPath, [join(dir, "scripts/sync-version.mjs")]);
      expect(readFileSync(join(dir, "src/version.ts"), "utf8")).toContain(
        'export const VERSION = "2.3.4-rc.1";',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
