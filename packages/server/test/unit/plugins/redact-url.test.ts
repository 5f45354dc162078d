import { describe, expect, it } from "vitest";
import { redactUrl } from "../../../src/plugins/redact-url.js";

const TOKEN = "Xq3vK9_pL2mN8rT5wY7zA1bC4dE6fG0hJ-kMnOpQrSt";

describe("redactUrl: what the request log shows of a URL", () => {
  it.each([
    `/api/public/webhooks/ingest/${TOKEN}`,
    `/api/public/webhooks/ingest/${TOKEN}/slack`,
    `/api/public/Webhooks/ingest/${TOKEN}`,
    `/api/public/webhooks/ingest%2F${TOKEN}`,
    `/API/PUBLIC/webhooks/ingest/${TOKEN}`,
    `//api//public/webhooks/ingest/${TOKEN}`,
    `/api/./public/${TOKEN}`,
    `/api/%70ublic/webhooks/ingest/${TOKEN}`,
    `/api/public/${TOKEN}?x=1`,
    `/api/public/webhooks/ingest/${TOKEN}%`,
  ])("shows no path segment under /api/public/ of %s", (url) => {
    const shown = redactUrl(url);
    expect(shown).not.toContain(TOKEN);
    expect(shown).toBe("/api/public/[redacted]");
  });

  it("leaves other URLs as they are", () => {
    expect(redactUrl("/api/rooms/12/messages?limit=5")).toBe("/api/rooms/12/messages?limit=5");
  });
});
