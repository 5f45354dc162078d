import { describe, expect, it } from "vitest";
import {
  contentDisposition,
  fileResponseHeaders,
  matchesIfNoneMatch,
} from "../../../src/http/file-response-headers.js";

const file = (name: string, mediaType: string) => ({ name, mediaType, size: 3, sha256: "ab12" });

describe("a file's Content-Disposition (RFC 6266, RFC 8187)", () => {
  it("keeps a plain ASCII name as it is, in both forms", () => {
    expect(contentDisposition("attachment", "report-2026.pdf")).toBe(
      `attachment; filename="report-2026.pdf"; filename*=UTF-8''report-2026.pdf`,
    );
  });

  it("gives the exact name as UTF-8 in filename* and an ASCII stand-in in filename", () => {
    expect(contentDisposition("inline", "日本語.png")).toBe(
      `inline; filename="___.png"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%E8%AA%9E.png`,
    );
  });

  it("lets no quote, backslash, semicolon, CR or LF of a name break out of the header", () => {
    const header = contentDisposition("attachment", 'a"b\\c;d\r\ne=f.txt');
    expect(header).toBe(
      `attachment; filename="a_b_c;d__e=f.txt"; filename*=UTF-8''a%22b%5Cc%3Bd%0D%0Ae%3Df.txt`,
    );
    expect(header).not.toMatch(/[\r\n]/);
    // The quoted fallback holds exactly two quotes: its own.
    expect(header.split("filename*")[0]!.match(/"/g)).toHaveLength(2);
  });

  it("names a file whose name has no printable ASCII at all 'download' in the fallback", () => {
    expect(contentDisposition("attachment", "   ")).toMatch(/^attachment; filename="download"; /);
  });
});

describe("the headers a file is served with", () => {
  it.each(["image/png", "image/jpeg", "image/gif", "image/webp"])(
    "serves %s inline under its own type",
    (type) => {
      const headers = fileResponseHeaders(file("p", type));
      expect(headers["content-type"]).toBe(type);
      expect(headers["content-disposition"]).toMatch(/^inline; /);
    },
  );

  it.each(["image/svg+xml", "text/html", "application/xhtml+xml", "application/pdf", "text/plain"])(
    "serves %s as an octet-stream attachment",
    (type) => {
      const headers = fileResponseHeaders(file("p", type));
      expect(headers["content-type"]).toBe("application/octet-stream");
      expect(headers["content-disposition"]).toMatch(/^attachment; /);
    },
  );

  it("always sends nosniff, a sandbox policy that loads nothing, and the SHA-256 as a strong ETag", () => {
    for (const type of ["image/png", "text/html"]) {
      const headers = fileResponseHeaders(file("p", type));
      expect(headers["x-content-type-options"]).toBe("nosniff");
      expect(headers["content-security-policy"]).toMatch(/^sandbox; default-src 'none'; /);
      expect(headers.etag).toBe('"ab12"');
      expect(headers["cache-control"]).toBe("private, no-cache");
    }
  });
});

describe("If-None-Match", () => {
  it("matches the tag in a list, weak or strong, and *", () => {
    expect(matchesIfNoneMatch('"x", "ab12"', '"ab12"')).toBe(true);
    expect(matchesIfNoneMatch('W/"ab12"', '"ab12"')).toBe(true);
    expect(matchesIfNoneMatch("*", '"ab12"')).toBe(true);
    expect(matchesIfNoneMatch('"ab1"', '"ab12"')).toBe(false);
    expect(matchesIfNoneMatch(undefined, '"ab12"')).toBe(false);
  });
});
