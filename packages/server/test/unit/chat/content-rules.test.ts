import { describe, expect, it } from "vitest";
import {
  CONTROL_CHARACTER,
  MAX_CONTENT_BYTES,
  validateMessageBody,
  validateMessageContent,
} from "../../../src/chat/content-rules.js";
import { AppError } from "../../../src/errors/app-error.js";

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

describe("content rules", () => {
  it("counts the limit in UTF-8 bytes, not characters", () => {
    expect(codeOf(() => validateMessageContent("é".repeat(MAX_CONTENT_BYTES / 2), undefined))).toBe(
      undefined,
    );
    expect(
      codeOf(() => validateMessageContent("é".repeat(MAX_CONTENT_BYTES / 2) + "a", undefined)),
    ).toBe("content_too_large");
    expect(codeOf(() => validateMessageContent("a".repeat(MAX_CONTENT_BYTES), undefined))).toBe(
      undefined,
    );
  });

  it("names the size and the limit of content that is too large", () => {
    try {
      validateMessageContent("🦜".repeat(4096) + "a", "markdown");
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({
        code: "content_too_large",
        extra: { limit: 16384, size: 16385 },
      });
    }
  });

  it("answers content_required for content that is missing, empty or not a string", () => {
    for (const content of [undefined, null, "", 42, { text: "a" }, ["a"]])
      expect(
        codeOf(() => validateMessageContent(content, undefined)),
        String(content),
      ).toBe("content_required");
  });

  it("checks the format first and knows only markdown and html", () => {
    expect(validateMessageContent("a", undefined).format).toBe("markdown");
    expect(validateMessageContent("a", "html").format).toBe("html");
    for (const format of ["rtf", "HTML", 1, null, ""])
      expect(
        codeOf(() => validateMessageContent("", format)),
        String(format),
      ).toBe("invalid_content_format");
  });

  it("refuses NUL naming body.content, and keeps other control characters", () => {
    try {
      validateMessageContent("a\u0000b", undefined);
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: "validation_failed", extra: { field: "body.content" } });
    }
    const terminal = "\u001b[31mfailed\u001b[0m\ttab\r\nline\u0007";
    expect(validateMessageContent(terminal, undefined).content).toBe(terminal);
  });

  it("answers content_required for no body and validation_failed for a body that is not an object", () => {
    expect(codeOf(() => validateMessageBody(undefined))).toBe("content_required");
    for (const body of [null, [], "text", 42, true])
      expect(
        codeOf(() => validateMessageBody(body)),
        JSON.stringify(body),
      ).toBe("validation_failed");
    expect(validateMessageBody({ content: "hi", ignored: 1 })).toEqual({
      content: "hi",
      format: "markdown",
    });
  });

  it("treats C0 controls and DEL as control characters, nothing else", () => {
    for (const char of ["\u0000", "\u0009", "\u001f", "\u007f"])
      expect(CONTROL_CHARACTER.test(char)).toBe(true);
    for (const char of [" ", "é", "\u0080", "\u200b"])
      expect(CONTROL_CHARACTER.test(char)).toBe(false);
  });
});
