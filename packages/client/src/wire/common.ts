/**
 * Building blocks of Parley's wire schemas. Each helper emits exactly the JSON Schema the server
 * has always validated and documented with (`type: ["string", "null"]`, `enum`), not TypeBox's
 * `anyOf` forms, so validation errors and /openapi.json read as before.
 */
import {
  Kind,
  Type,
  type Static,
  type TInteger,
  type TNull,
  type TNumber,
  type TObject,
  type TSchema,
  type TString,
  type TUnsafe,
  type ObjectOptions,
  type SchemaOptions,
  type StringOptions,
} from "@sinclair/typebox";

/**
 * Every id in a path, a query or a body: a positive safe integer. Larger numbers (`1e21`,
 * `9223372036854775808`) would lose digits in JavaScript and overflow PostgreSQL's bigint, so the
 * server answers them 400 rather than 500 from the database.
 */
export function Id(options: SchemaOptions = {}): TInteger {
  return Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, ...options });
}

/** ISO-8601 UTC with milliseconds, e.g. `2026-11-22T10:00:00.000Z`. */
export function Timestamp(options: StringOptions = {}): TString {
  return Type.String({ format: "date-time", ...options });
}

/** One of `values`, as `{ type: "string", enum: [...] }`. */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

type NullableBase = TString | TInteger | TNumber | TNull;

/** `schema` or null, as `{ type: [<schema's type>, "null"], ... }`. */
export function Nullable<T extends NullableBase>(
  schema: T,
  options: SchemaOptions = {},
): TUnsafe<Static<T> | null> {
  const { [Kind]: _kind, type, ...keywords } = schema as T & { type: string };
  return Type.Unsafe<Static<T> | null>({ ...keywords, type: [type, "null"], ...options });
}

/** RFC 9457 problem details: every error Parley answers has this body. */
export const ProblemDetailsSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    /** Stable snake_case code to branch on, e.g. `invalid_secret`, `not_found`. */
    code: Type.String(),
  },
  // Some codes add fields (`field` for `unknown_field`, `ruleId` for `dlp_blocked`): keep them.
  { additionalProperties: true },
);

/** RFC 9457 problem details: every error Parley answers has this body. */
export interface ProblemDetails extends Static<typeof ProblemDetailsSchema> {
  /** Some codes add fields, e.g. `field` for `unknown_field`, `ruleId` for `dlp_blocked`. */
  [extension: string]: unknown;
}

/** A page of `item`s: `{ items, nextCursor }`, `nextCursor` null on the last page. */
export function PageOf<T extends TSchema>(item: T, options: ObjectOptions = {}) {
  return Type.Object({ items: Type.Array(item), nextCursor: Nullable(Type.String()) }, options);
}

/** One page of a list: pass `nextCursor` back as `cursor` for the next one; null on the last. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A list's page size when `?limit=` is not given. */
export const DEFAULT_PAGE_LIMIT = 50;
/** The largest `?limit=`. */
export const MAX_PAGE_LIMIT = 200;

/** `?limit=` (1..200, default 50) and the opaque `?cursor=` of every list. */
export const listQueryProperties = {
  /** 1..200, default 50. */
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT }),
  ),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

/** A list's query string: `?limit=&cursor=`. */
export const ListParamsSchema = Type.Object(listQueryProperties);
export type ListParams = Static<typeof ListParamsSchema>;

/** Path parameters that are ids, e.g. `IdParams("roomId", "messageId")`. */
export function IdParams<const K extends string>(...names: K[]): TObject<{ [P in K]: TInteger }> {
  return Type.Object(
    Object.fromEntries(names.map((name) => [name, Id()])) as {
      [P in K]: TInteger;
    },
  );
}

/** `{id}`: the path of a resource addressed by its id. */
export const IdParamsSchema = IdParams("id");

/** For an action without fields: a body, if sent, must be empty, so a stray field is refused. */
export const EmptyBodySchema = Type.Object({}, { additionalProperties: false });
