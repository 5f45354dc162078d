// Bundles one browser UI of the server (ui/<source>/) into dist/<out>/:
//   index.html                 the page, pointing at the hashed assets
//   assets/<entry>-<hash>.js   one ES module: the page and @parley/client/browser
//   assets/<entry>-style-<hash>.css
// The admin UI (build-admin-ui.mjs, served at /admin/) and the chat page (build-chat-ui.mjs,
// served at /app/) are both built by this. Asset names change with their content, so they are
// cached for a year; the page itself is revalidated every time.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";

export const serverDir = fileURLToPath(new URL("..", import.meta.url));

/**
 * Builds the bundle into `outDir` (replaced as a whole, so stale hashed files do not pile up).
 * Answers the written files and their sizes in bytes.
 *
 * @param {{ label: string, source: string, entry: string, urlPath: string, outDir: string, minify?: boolean }} ui
 *   `source`: the folder under ui/; `entry`: the asset name prefix; `urlPath`: where the server
 *   serves it (the page's placeholders are `<urlPath>assets/<entry>.js` and `.css`).
 */
export async function bundleUi({ label, source, entry, urlPath, outDir, minify = true }) {
  const sourceDir = path.join(serverDir, "ui", source);
  const result = await esbuild.build({
    absWorkingDir: serverDir,
    entryPoints: {
      [entry]: path.join(sourceDir, "src", "main.ts"),
      [`${entry}-style`]: path.join(sourceDir, "styles.css"),
    },
    // The page imports @parley/client/browser, resolved through the client's package exports to
    // its compiled output (so `tsc -b` runs first, as `npm run build` does), exactly as any other
    // application bundles it. platform "browser" makes a Node built-in there a build error.
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
    if (name.startsWith(`${entry}-style-`) && name.endsWith(".css")) css = name;
    else if (name.startsWith(`${entry}-`) && name.endsWith(".js")) js = name;
  }
  if (js === undefined || css === undefined) {
    throw new Error(`the ${label} build wrote no script or stylesheet: ${[...files.keys()]}`);
  }

  let html = await fs.readFile(path.join(sourceDir, "index.html"), "utf8");
  for (const [kind, name] of [
    ["js", js],
    ["css", css],
  ]) {
    const placeholder = `${urlPath}assets/${entry}.${kind}`;
    if (!html.includes(`"${placeholder}"`)) {
      throw new Error(`ui/${source}/index.html must reference "${placeholder}"`);
    }
    html = html.replace(`"${placeholder}"`, `"${urlPath}assets/${name}"`);
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

/** Runs `build` when `moduleUrl` is the script node was started with; prints what it wrote. */
export async function runIfMain(moduleUrl, label, outDir, build) {
  if (process.argv[1] === undefined || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  try {
    const written = await build();
    const relative = path.relative(process.cwd(), outDir) || ".";
    for (const { name, bytes } of written) {
      console.log(`${label}: ${path.join(relative, name)} ${(bytes / 1024).toFixed(1)} KiB`);
    }
  } catch (error) {
    console.error(`${label} build failed: ${error.message}`);
    for (const message of error.errors ?? []) {
      const where = message.location
        ? `${message.location.file}:${message.location.line}:${message.location.column}: `
        : "";
      console.error(`  ${where}${message.text}`);
    }
    process.exitCode = 1;
  }
}
