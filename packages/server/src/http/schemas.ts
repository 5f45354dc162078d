/** JSON schemas shared by route families. */
export const problemSchema = {
  type: "object",
  properties: {
    type: { type: "string" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    code: { type: "string" },
  },
  required: ["type", "title", "status", "detail", "code"],
  additionalProperties: true,
} as const;

/** Error answers every authenticated route can give. */
export const authErrors = { 401: problemSchema, 403: problemSchema } as const;

export const idParams = {
  type: "object",
  properties: { id: { type: "integer", minimum: 1 } },
  required: ["id"],
} as const;

export const timestamp = { type: "string", format: "date-time" } as const;

export function listOf(item: object) {
  return {
    type: "object",
    properties: { items: { type: "array", items: item }, nextCursor: { type: ["string", "null"] } },
    required: ["items", "nextCursor"],
  } as const;
}
