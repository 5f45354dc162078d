// Writes .env.example from the server's settings schema (`npm run docs:env`); a test keeps them in step.
import fs from "node:fs";
import { SETTINGS } from "../packages/server/src/config/config-schema.js";

const lines = [
  "# Every setting of `parley serve`, with its default. Each is also a flag: see `parley serve --help`.",
  "# Generated from packages/server/src/config/config-schema.ts by `npm run docs:env`.",
  "",
];
for (const setting of Object.values(SETTINGS)) {
  lines.push(
    `# ${setting.description}${"values" in setting ? ` One of: ${setting.values.join(", ")}.` : ""}`,
  );
  lines.push("default" in setting ? `${setting.env}=${setting.default}` : `# ${setting.env}=`);
  lines.push("");
}
fs.writeFileSync(new URL("../.env.example", import.meta.url), lines.join("\n"));
console.log(`.env.example: ${Object.keys(SETTINGS).length} settings`);
