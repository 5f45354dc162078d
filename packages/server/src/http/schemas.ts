/**
 * Answers shared by route families. The API's shapes themselves are @parley/client/wire's
 * schemas: routes validate and serialize with them, so the client's types are what they answer.
 */
import { ProblemDetailsSchema } from "@parley/client/wire";

export const problemSchema = ProblemDetailsSchema;

/** Error answers every authenticated route can give. */
export const authErrors = { 401: problemSchema, 403: problemSchema } as const;
