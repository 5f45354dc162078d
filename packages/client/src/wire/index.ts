/**
 * `@parley/client/wire`: the JSON Schemas of Parley's HTTP API, written once with TypeBox. The
 * server validates requests and serializes answers with them and serves them as /openapi.json;
 * the client's types (`User`, `Webhook`, `Page`, ...) are their static types. Each schema is a
 * plain JSON Schema object, usable with any JSON Schema validator.
 */
export * from "./common.js";
export * from "./users.js";
export * from "./auth.js";
export * from "./rooms.js";
export * from "./calls.js";
export * from "./messages.js";
export * from "./search.js";
export * from "./webhooks.js";
export * from "./endpoint-credentials.js";
export * from "./inbound-webhooks.js";
export * from "./discord.js";
export * from "./operations.js";
export * from "./admin.js";
