import { AjvCompiler } from "@fastify/ajv-compiler";
import type { FastifyServerOptions } from "fastify";
import { parseInstant } from "../time/parse-instant.js";

const ajvFactory = AjvCompiler();

type Validator = ((data: unknown, context?: unknown) => boolean) & {
  errors?: unknown[] | null;
  schemaEnv?: unknown;
};

/**
 * Request validation, for Fastify's `schemaController` option. Unknown fields must fail
 * (additionalProperties: false), never be silently dropped. Query strings and path parameters
 * arrive as text, so they are coerced to the schema's types; JSON bodies are not:
 * `{"content": 42}` or `{"enabled": "true"}` is a type error, not a guess. A `date-time` must name
 * an instant the server can read (see dateTimeFormat).
 */
export const requestValidator: NonNullable<FastifyServerOptions["schemaController"]> = {
  compilersFactory: { buildValidator: buildRequestValidator as never },
};

function buildRequestValidator(externalSchemas: unknown, serverOptions: unknown) {
  const base = { removeAdditional: false, useDefaults: true, allErrors: false } as const;
  const options = (serverOptions ?? {}) as {
    customOptions?: object;
    plugins?: unknown[];
    onCreate?: (ajv: FormatRegistry) => void;
  };
  const onCreate = (ajv: FormatRegistry) => {
    options.onCreate?.(ajv);
    ajv.addFormat("date-time", dateTimeFormat);
  };
  const build = ajvFactory as unknown as (
    schemas: unknown,
    options: unknown,
  ) => (route: { httpPart?: string }) => unknown;
  const forBody = build(externalSchemas, {
    ...options,
    onCreate,
    customOptions: { ...options.customOptions, ...base, coerceTypes: false },
  });
  const forText = build(externalSchemas, {
    ...options,
    onCreate,
    customOptions: { ...options.customOptions, ...base, coerceTypes: "array" },
  });
  return (route: { httpPart?: string }) =>
    route.httpPart === "body" ? forBody(route) : refuseNonFinite(forText(route) as Validator);
}

interface FormatRegistry {
  addFormat(name: string, format: { type: "string"; validate: (text: string) => boolean }): unknown;
}

/**
 * `format: "date-time"`, replacing ajv-formats' own (the compiler's plugin, added before
 * `onCreate` runs): that one lets through what no Date can hold, such as the leap second
 * `2026-06-30T23:59:60Z` or the zone `+01`, which reached the queries as NaN (a 500 on
 * PostgreSQL, nothing found on SQLite). A value passes only when parseInstant, which the services
 * read it with, answers a finite instant.
 */
const dateTimeFormat = {
  type: "string" as const,
  validate: (text: string) => parseInstant(text) !== undefined,
};

/**
 * Ajv coerces `?limit=Infinity` (or a 400-digit number) to Infinity and then skips `minimum` and
 * `maximum`, which only look at finite numbers; no query or path value of Parley's is infinite.
 */
function refuseNonFinite(validate: Validator): Validator {
  const checked: Validator = (data, context) => {
    const valid = validate(data, context);
    checked.errors = validate.errors;
    if (!valid || typeof data !== "object" || data === null) return valid;
    for (const [name, value] of Object.entries(data)) {
      const values: unknown[] = Array.isArray(value) ? value : [value];
      if (values.some((one) => typeof one === "number" && !Number.isFinite(one))) {
        checked.errors = [
          {
            keyword: "type",
            instancePath: `/${name}`,
            message: "must be a finite number",
            params: {},
          },
        ];
        return false;
      }
    }
    return true;
  };
  // Fastify passes the parent to Ajv validators (marked by schemaEnv) so defaults can be applied.
  checked.schemaEnv = validate.schemaEnv;
  return checked;
}
