import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { VERSION, request } from "../src/index.js";

describe("VERSION", () => {
  it("equals package.json's version and is in the user-agent", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
    expect(request.endpoint.DEFAULTS.headers["user-agent"]).toMatch(
      new RegExp(`^parley-client/${VERSION} parley-endpoint/`),
    );
  });
});
