import { readFileSync } from "node:fs";
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
