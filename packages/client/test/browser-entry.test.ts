import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as browser from "../src/browser.js";
import * as main from "../src/index.js";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** Every file the module at `file` imports, transitively, within this package. */
function moduleGraph(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = fs.readFileSync(file, "utf8");
  for (const [, specifier] of text.matchAll(/^(?:import|export)[^"]*?from "([^"]+)"/gm)) {
    if (specifier!.startsWith(".")) {
      moduleGraph(path.resolve(path.dirname(file), specifier!.replace(/\.js$/, ".ts")), seen);
    }
  }
  return seen;
}

describe("@parley/client/browser", () => {
  it("exports the main entry's values, the same objects", () => {
    for (const [name, value] of Object.entries(browser)) {
      expect(main[name as keyof typeof main], name).toBe(value);
    }
    expect(Object.keys(browser)).toEqual(
      expect.arrayContaining([
        "request",
        "paginate",
        "RequestError",
        "NetworkError",
        "EVENT_NAMES",
      ]),
    );
  });

  it("reaches no Node built-in and no Buffer, so a browser bundle needs no polyfill", () => {
    const files = [...moduleGraph(path.join(SRC, "browser.ts"))];
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = fs.readFileSync(file, "utf8");
      expect(text, path.relative(SRC, file)).not.toMatch(/from "node:|\bBuffer\./);
    }
  });
});
