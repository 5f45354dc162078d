import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsync, FastifyReply } from "fastify";
import { AppError } from "../errors/app-error.js";
import { toProblem } from "../errors/problem-details.js";

/**
 * Where `packages/server/scripts/build-admin-ui.mjs` writes the bundle: `index.html` and
 * `assets/<name>-<hash>.<ext>`. The same path from `src/admin-ui/` (tests, tsx) and from
 * `dist/admin-ui/` (the built server).
 */
export const DEFAULT_ADMIN_UI_DIR = fileURLToPath(new URL("../../dist/admin/", import.meta.url));

/** Every admin UI answer carries these, errors included. */
export const ADMIN_UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; " +
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
};

/** Asset names carry a content hash, so a browser may keep them for ever. */
const IMMUTABLE = "public, max-age=31536000, immutable";

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

interface Bundle {
  html: Buffer;
  assets: Map<string, { body: Buffer; contentType: string }>;
}

export interface AdminUiOptions {
  /** The built bundle's folder; default `packages/server/dist/admin/`. */
  dir?: string;
}

/**
 * Serves the admin UI: the page for `/admin/` and every `/admin/*` deep link (the page routes in
 * the browser), the bundle's assets under `/admin/assets/`. Files are read once into memory on
 * the first request that finds them; until the bundle is built every answer is a 503 saying so.
 */
export const adminUiRoutes: FastifyPluginAsync<AdminUiOptions> = async (app, options) => {
  const dir = options.dir ?? DEFAULT_ADMIN_UI_DIR;
  let bundle: Bundle | undefined;

  async function loadBundle(): Promise<Bundle | undefined> {
    if (bundle) return bundle;
    let html: Buffer;
    try {
      html = await fs.readFile(path.join(dir, "index.html"));
    } catch {
      return undefined;
    }
    const assets = new Map<string, { body: Buffer; contentType: string }>();
    const assetsDir = path.join(dir, "assets");
    const names = await fs.readdir(assetsDir).catch(() => [] as string[]);
    for (const name of names) {
      const contentType = CONTENT_TYPES[path.extname(name)];
      if (contentType === undefined) continue;
      assets.set(name, { body: await fs.readFile(path.join(assetsDir, name)), contentType });
    }
    bundle = { html, assets };
    return bundle;
  }

  function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
    return reply
      .code(error.status)
      .header("cache-control", "no-store")
      .type("application/problem+json")
      .send(toProblem(error));
  }

  function notBuilt(reply: FastifyReply): FastifyReply {
    return sendProblem(
      reply,
      new AppError(
        "service_unavailable",
        `the admin UI has not been built (no ${path.join(dir, "index.html")}): run \`npm run build\``,
      ),
    );
  }

  app.addHook("onSend", async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(ADMIN_UI_SECURITY_HEADERS))
      reply.header(name, value);
    return payload;
  });

  app.get("/admin", { schema: { hide: true } }, async (request, reply) => {
    const query = request.url.indexOf("?");
    return reply.redirect(query === -1 ? "/admin/" : `/admin/${request.url.slice(query)}`, 302);
  });

  app.get<{ Params: { file: string } }>(
    "/admin/assets/:file",
    { schema: { hide: true } },
    async (request, reply) => {
      const loaded = await loadBundle();
      if (!loaded) return notBuilt(reply);
      const asset = loaded.assets.get(request.params.file);
      if (!asset) {
        return sendProblem(
          reply,
          new AppError("not_found", `no admin UI asset ${request.params.file}`),
        );
      }
      return reply.header("cache-control", IMMUTABLE).type(asset.contentType).send(asset.body);
    },
  );

  app.get<{ Params: { "*": string } }>(
    "/admin/*",
    { schema: { hide: true } },
    async (request, reply) => {
      const rest = request.params["*"];
      // A missing asset must not be answered with the page: the browser would run HTML as script.
      if (rest.startsWith("assets/")) {
        return sendProblem(reply, new AppError("not_found", `no admin UI asset ${rest.slice(7)}`));
      }
      const loaded = await loadBundle();
      if (!loaded) return notBuilt(reply);
      return reply
        .header("cache-control", "no-cache")
        .type("text/html; charset=utf-8")
        .send(loaded.html);
    },
  );
};
