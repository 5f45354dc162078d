import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsync, FastifyReply } from "fastify";
import { AppError } from "../errors/app-error.js";
import { toProblem } from "../errors/problem-details.js";

/**
 * Where `packages/server/scripts/bundle-ui.mjs` writes a bundle: `dist/<folder>/index.html` and
 * `assets/<name>-<hash>.<ext>`. The same path from `src/http/` (tests, tsx) and from `dist/http/`
 * (the built server).
 */
export function bundleDir(folder: string): string {
  return fileURLToPath(new URL(`../../dist/${folder}/`, import.meta.url));
}

/**
 * Every answer of a browser UI carries these, errors included. Images from Parley only (`data:`
 * for the pages' empty icon): an image from elsewhere would tell its host who looks, and when.
 */
export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
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

export interface StaticUiOptions {
  /** Where it is served, e.g. "/admin". */
  prefix: string;
  /** What it is called in answers, e.g. "admin UI". */
  label: string;
  /** The built bundle's folder. */
  dir: string;
}

/**
 * Serves a browser UI (the admin UI, the chat page): the page for `<prefix>/` and every
 * `<prefix>/*` deep link (the page routes in the browser), the bundle's assets under
 * `<prefix>/assets/`. Files are read once into memory on the first request that finds them; until
 * the bundle is built every answer is a 503 saying so.
 */
export const staticUiRoutes: FastifyPluginAsync<StaticUiOptions> = async (app, options) => {
  const { dir, prefix, label } = options;
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
        `the ${label} has not been built (no ${path.join(dir, "index.html")}): run \`npm run build\``,
      ),
    );
  }

  app.addHook("onSend", async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(UI_SECURITY_HEADERS)) reply.header(name, value);
    return payload;
  });

  app.get(prefix, { schema: { hide: true } }, async (request, reply) => {
    const query = request.url.indexOf("?");
    return reply.redirect(
      query === -1 ? `${prefix}/` : `${prefix}/${request.url.slice(query)}`,
      302,
    );
  });

  app.get<{ Params: { file: string } }>(
    `${prefix}/assets/:file`,
    { schema: { hide: true } },
    async (request, reply) => {
      const loaded = await loadBundle();
      if (!loaded) return notBuilt(reply);
      const asset = loaded.assets.get(request.params.file);
      if (!asset) {
        return sendProblem(
          reply,
          new AppError("not_found", `no ${label} asset ${request.params.file}`),
        );
      }
      return reply.header("cache-control", IMMUTABLE).type(asset.contentType).send(asset.body);
    },
  );

  app.get<{ Params: { "*": string } }>(
    `${prefix}/*`,
    { schema: { hide: true } },
    async (request, reply) => {
      const rest = request.params["*"];
      // A missing asset must not be answered with the page: the browser would run HTML as script.
      if (rest.startsWith("assets/")) {
        return sendProblem(reply, new AppError("not_found", `no ${label} asset ${rest.slice(7)}`));
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
