import type { FastifyError } from "fastify";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../src/errors/app-error.js";
import { toAppError } from "../../../src/plugins/to-app-error.js";

function fastifyError(code: string, statusCode?: number, message = code): FastifyError {
  return Object.assign(new Error(message), { code, statusCode }) as FastifyError;
}

describe("toAppError, the one mapping from errors to codes", () => {
  it("passes Parley's own errors through unchanged", () => {
    const own = new AppError("dlp_blocked", "blocked", { ruleId: "payment_card" });
    expect(toAppError(own)).toBe(own);
  });

  it("maps Fastify's content-type parser errors by their code", () => {
    const cases: Array<[string, number, string, number]> = [
      ["FST_ERR_CTP_INVALID_MEDIA_TYPE", 415, "unsupported_media_type", 415],
      ["FST_ERR_CTP_INVALID_JSON_BODY", 400, "invalid_json", 400],
      ["FST_ERR_CTP_EMPTY_JSON_BODY", 400, "invalid_json", 400],
      ["FST_ERR_CTP_BODY_TOO_LARGE", 413, "body_too_large", 400],
      ["FST_ERR_CTP_INVALID_CONTENT_LENGTH", 400, "bad_request", 400],
      ["FST_ERR_BAD_URL", 400, "bad_request", 400],
      ["FST_ERR_MAX_PARAM_LENGTH", 414, "bad_request", 414],
    ];
    for (const [code, statusCode, expected, status] of cases)
      expect(toAppError(fastifyError(code, statusCode)), code).toMatchObject({
        code: expected,
        status,
      });
  });

  it("maps plugin errors by their status: 404, 413, 415, 429", () => {
    expect(toAppError(fastifyError("X", 404))).toMatchObject({ code: "not_found", status: 404 });
    expect(toAppError(fastifyError("FST_PARTS_LIMIT", 413))).toMatchObject({
      code: "body_too_large",
      status: 400,
    });
    expect(toAppError(fastifyError("X", 415))).toMatchObject({ code: "unsupported_media_type" });
    expect(toAppError(fastifyError("X", 429))).toMatchObject({ code: "rate_limited", status: 429 });
  });

  it("keeps the status of any other 4xx as bad_request, never validation_failed", () => {
    for (const status of [400, 405, 406, 411, 431]) {
      const mapped = toAppError(fastifyError("FST_SOMETHING_NEW", status, "it was refused"));
      expect(mapped, String(status)).toMatchObject({ code: "bad_request", status });
      expect(mapped.detail).toBe("it was refused");
    }
  });

  it("turns anything else into internal_error without leaking its message", () => {
    for (const error of [
      new Error("secret detail"),
      fastifyError("FST_ERR_X", 500, "secret detail"),
    ]) {
      const mapped = toAppError(error);
      expect(mapped).toMatchObject({ code: "internal_error", status: 500 });
      expect(mapped.detail).not.toContain("secret");
    }
  });

  it("names the field of a schema failure, and unknown fields as unknown_field", () => {
    const failure = (validation: object[], validationContext: string) =>
      Object.assign(fastifyError("FST_ERR_VALIDATION", 400), { validation, validationContext });
    expect(
      toAppError(
        failure(
          [{ keyword: "maximum", instancePath: "/roomId", message: "must be <= 9", params: {} }],
          "params",
        ),
      ),
    ).toMatchObject({ code: "validation_failed", extra: { field: "params.roomId" } });
    expect(
      toAppError(
        failure(
          [
            {
              keyword: "additionalProperties",
              instancePath: "",
              params: { additionalProperty: "nmae" },
            },
          ],
          "body",
        ),
      ),
    ).toMatchObject({ code: "unknown_field", extra: { field: "body.nmae" } });
    expect(
      toAppError(
        failure(
          [{ keyword: "required", instancePath: "", params: { missingProperty: "name" } }],
          "body",
        ),
      ),
    ).toMatchObject({ code: "validation_failed", extra: { field: "body.name" } });
  });
});
