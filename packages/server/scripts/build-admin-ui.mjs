// Bundles the admin UI (packages/server/admin-ui) into packages/server/dist/admin/:
//   index.html                 the page, pointing at the hashed assets
//   assets/app-<hash>.js       one ES module: the UI and the browser-safe parts of @parley/client
//   assets/app-<hash>.css
// The server (src/admin-ui/admin-ui-routes.ts) serves that folder at /admin/. Asset names change
// with their content, so they are cached for a year; the page itself is revalidated every time.
//
//   node packages/server/scripts/build-admin-ui.mjs        (the root `npm run build` runs it)
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";

const serverDir = fileURLToPath(new URL("..", import.meta.url));
const sourceDir = path.join(serverDir, "admin-ui");
export const DEFAULT_OUT_DIR = path.join(serverDir, "dist", "admin");

/** The references in admin-ui/index.html that the build points at the hashed files. */
const PLACEHOLDERS = { js: "/admin/assets/app.js", css: "/admin/assets/app.css" };

/**
 * Builds the bundle into `outDir` (replaced as a whole, so stale hashed files do not pile up).
 * Answers the written files and their sizes in bytes.
 */
export async function buildAdminUi({ outDir = DEFAULT_OUT_DIR, minify = true } = {}) {
  const result = await esbuild.build({
    absWorkingDir: serverDir,
    entryPoints: {
      app: path.join(sourceDir, "src", "main.ts"),
      "app-style": path.join(sourceDir, "styles.css"),
    },
    // The client's sources import @parley/endpoint: bundle its sources too, so the UI never
    // depends on whether the endpoint package was compiled first.
    alias: { "@parley/endpoint": path.join(serverDir, "..", "endpoint", "src", "index.ts") },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["es2022", "chrome111", "firefox111", "safari16.4"],
    minify,
    legalComments: "none",
    entryNames: "[name]-[hash]",
    outdir: "assets",
    write: false,
    metafile: true,
    logLevel: "silent",
  });

  const files = new Map();
  let js;
  let css;
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    files.set(`assets/${name}`, file.contents);
    if (name.startsWith("app-style-") && name.endsWith(".css")) css = name;
    else if (name.startsWith("app-") && name.endsWith(".js")) js = name;
  }
  if (js === undefined || css === undefined) {
    throw new Error(`the admin UI build wrote no app script or stylesheet: ${[...files.keys()]}`);
  }

  let html = await fs.readFile(path.join(sourceDir, "index.html"), "utf8");
  for (const [kind, placeholder] of Object.entries(PLACEHOLDERS)) {
    if (!html.includes(`"${placeholder}"`)) {
      throw new Error(`admin-ui/index.html must reference "${placeholder}"`);
    }
    html = html.replace(`"${placeholder}"`, `"/admin/assets/${kind === "js" ? js : css}"`);
  }
  files.set("index.html", new TextEncoder().encode(html));

  // Write next to the target, then swap, so a running server never reads a half-written bundle.
  const staging = `${outDir}.${process.pid}-${randomBytes(4).toString("hex")}`;
  await fs.mkdir(path.join(staging, "assets"), { recursive: true });
  for (const [name, contents] of files) await fs.writeFile(path.join(staging, name), contents);
  const retired = `${staging}-old`;
  await fs.rename(outDir, retired).catch((error) => {
    if (error.code !== "ENOENT") throw error;
  });
  await fs.rename(staging, outDir);
  await fs.rm(retired, { recursive: true, force: true });

  return [...files].map(([name, contents]) => ({ name, bytes: contents.byteLength }));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    const written = await buildAdminUi();
    const relative = path.relative(process.cwd(), DEFAULT_OUT_DIR) || ".";
    for (const { name, bytes } of written) {
      console.log(`admin UI: ${path.join(relative, name)} ${(bytes / 1024).toFixed(1)} KiB`);
    }
  } catch (error) {
    console.error(`admin UI build failed: ${error.message}`);
    for (const message of error.errors ?? []) {
      const where = message.location
        ? `${message.location.file}:${message.location.line}:${message.location.column}: `
        : "";
      console.error(`  ${where}${message.text}`);
    }
    process.exitCode = 1;
  }
}
