// Bundles the chat page (packages/server/ui/chat) into packages/server/dist/app/, which the
// server (src/chat-ui/chat-ui-routes.ts) serves at /app/. (Not dist/chat/: that is where tsc puts
// src/chat/.) See bundle-ui.mjs.
//
//   node packages/server/scripts/build-chat-ui.mjs        (the root `npm run build` runs it)
import path from "node:path";
import { bundleUi, runIfMain, serverDir } from "./bundle-ui.mjs";

export const DEFAULT_OUT_DIR = path.join(serverDir, "dist", "app");

export function buildChatUi({ outDir = DEFAULT_OUT_DIR, minify = true } = {}) {
  return bundleUi({
    label: "chat page",
    source: "chat",
    entry: "chat",
    urlPath: "/app/",
    outDir,
    minify,
  });
}

await runIfMain(import.meta.url, "chat page", DEFAULT_OUT_DIR, buildChatUi);
