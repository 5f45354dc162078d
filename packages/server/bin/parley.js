#!/usr/bin/env node
// The `parley` command. It runs the built CLI (dist/cli.js); this file exists from the moment the
// repository is cloned, so npm links the `parley` bin on `npm ci` (it skips a bin whose file is
// missing, and dist/ is only built afterwards, by the root `prepare` script or `npm run build`).
import { existsSync } from "node:fs";

const cli = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write(
    "parley: the CLI is not built yet; run `npm run build` at the repository root first\n",
  );
  process.exit(1);
}
await import(cli.href);
