import type { FastifyPluginAsync } from "fastify";
import { bundleDir, staticUiRoutes } from "./static-ui-routes.js";

/** The admin UI's bundle (scripts/build-admin-ui.mjs). */
const DEFAULT_ADMIN_UI_DIR = bundleDir("admin");

export interface AdminUiOptions {
  /** The built bundle's folder; default `packages/server/dist/admin/`. */
  dir?: string;
}

/** The admin UI at /admin/ (see staticUiRoutes). */
export const adminUiRoutes: FastifyPluginAsync<AdminUiOptions> = async (app, options) =>
  staticUiRoutes(app, {
    prefix: "/admin",
    label: "admin UI",
    dir: options.dir ?? DEFAULT_ADMIN_UI_DIR,
  });
