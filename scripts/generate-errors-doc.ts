// Rewrites the table between the markers in docs/errors.md from the server's error catalogue.
// Run with `npm run docs:errors` after adding a code; a test fails while the two disagree.
import fs from "node:fs";
import { ERROR_CATALOGUE } from "../packages/server/src/errors/error-catalogue.js";

const file = new URL("../docs/errors.md", import.meta.url);
const text = fs.readFileSync(file, "utf8");
const rows = Object.entries(ERROR_CATALOGUE)
  .sort(([a, x], [b, y]) => x.status - y.status || a.localeCompare(b))
  .map(([code, entry]) => `| \`${code}\` | ${entry.status} | ${entry.title} |`);
const table = ["| code | status | meaning |", "|---|---|---|", ...rows].join("\n");
const next = text.replace(
  /(<!-- errors:start -->)[\s\S]*?(<!-- errors:end -->)/,
  `$1\n${table}\n$2`,
);
fs.writeFileSync(file, next);
console.log(`docs/errors.md: ${rows.length} codes`);
