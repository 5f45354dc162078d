import type { FastifyPluginAsync } from "fastify";
import { bundleDir, staticUiRoutes } from "../http/static-ui-routes.js";

/** The chat page's bundle (scripts/build-chat-ui.mjs); dist/app/, since dist/chat/ is src/chat/'s. */
const DEFAULT_CHAT_UI_DIR = bundleDir("app");

export interface ChatUiOptions {
  /** The built bundle's folder; default `packages/server/dist/app/`. */
  dir?: string;
}

/** The chat page at /app/ (see staticUiRoutes). */
export const chatUiRoutes: FastifyPluginAsync<ChatUiOptions> = async (app, options) =>
  staticUiRoutes(app, {
    prefix: "/app",
    label: "chat page",
    dir: options.dir ?? DEFAULT_CHAT_UI_DIR,
  });
