// Writes package.json's version into src/version.ts. Runs as the "version" script, so
// `npm version <new> -w @parley/endpoint` keeps VERSION (and the user-agent) in step.
import { readFileSync, writeFileSync } from "node:fs";

const root = new URL("../", import.meta.url);
const { version } = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
const file = new URL("src/version.ts", root);
const source = readFileSync(file, "utf8");
const updated = source.replace(/VERSION = "[^"]*"/, `VERSION = ${JSON.stringify(version)}`);
if (updated === source && !source.includes(`VERSION = ${JSON.stringify(version)}`)) {
  throw new Error(`no VERSION constant found in ${file.pathname}`);
}
writeFileSync(file, updated);
