// Bundles the admin UI (packages/server/ui/admin) into packages/server/dist/admin/, which the
// server (src/http/admin-ui-routes.ts) serves at /admin/. See bundle-ui.mjs.
//
//   node packages/server/scripts/build-admin-ui.mjs        (the root `npm run build` runs it)
import path from "node:path";
import { bundleUi, runIfMain, serverDir } from "./bundle-ui.mjs";

export const DEFAULT_OUT_DIR = path.join(serverDir, "dist", "admin");

export function buildAdminUi({ outDir = DEFAULT_OUT_DIR, minify = true } = {}) {
  return bundleUi({
    label: "admin UI",
    source: "admin",
    entry: "app",
    urlPath: "/admin/",
    outDir,
    minify,
  });
}

await runIfMain(import.meta.url, "admin UI", DEFAULT_OUT_DIR, buildAdminUi);
