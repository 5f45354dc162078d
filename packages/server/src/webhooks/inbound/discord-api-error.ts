/**
 * A failure on the Discord-compatible route, in Discord's own shape: `{message, code}` with
 * Discord's JSON error code, so discord.js (DiscordAPIError.code) and other Discord clients branch
 * on it as they do against Discord. https://discord.com/developers/docs/topics/opcodes-and-status-codes#json
 */
export class DiscordApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { message: string; code?: number; [extra: string]: unknown },
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
    this.name = "DiscordApiError";
  }
}

/** Discord's JSON error codes that Parley answers with. */
export const DISCORD_CODES = {
  general: 0,
  unknownChannel: 10003,
  unknownMessage: 10008,
  unknownWebhook: 10015,
  requestTooLarge: 40005,
  emptyMessage: 50006,
  invalidFormBody: 50035,
  invalidApiVersion: 50041,
  invalidJson: 50109,
  blockedByModeration: 200000,
} as const;

/** Unknown id, unknown token, disabled webhook, id and token of two webhooks: one answer. */
export function unknownWebhook(): DiscordApiError {
  return new DiscordApiError(404, {
    message: "Unknown Webhook",
    code: DISCORD_CODES.unknownWebhook,
  });
}

/** A message id that is not one of this webhook's messages (or is deleted). */
export function unknownMessage(): DiscordApiError {
  return new DiscordApiError(404, {
    message: "Unknown Message",
    code: DISCORD_CODES.unknownMessage,
  });
}

export function emptyMessage(): DiscordApiError {
  return new DiscordApiError(400, {
    message: "Cannot send an empty message",
    code: DISCORD_CODES.emptyMessage,
  });
}

export function invalidApiVersion(): DiscordApiError {
  return new DiscordApiError(400, {
    message: "Invalid API version",
    code: DISCORD_CODES.invalidApiVersion,
  });
}

/** One field's failure, as Discord nests it: `{embeds: {"0": {title: {_errors: [...]}}}}`. */
export interface FieldError {
  path: ReadonlyArray<string | number>;
  code: string;
  message: string;
}

/** 400 Invalid Form Body (50035) with Discord's nested `errors` object. */
export function invalidFormBody(...fields: FieldError[]): DiscordApiError {
  const errors: Record<string, unknown> = {};
  for (const field of fields) {
    let node = errors;
    for (const key of field.path) {
      const name = String(key);
      node = (node[name] ??= {}) as Record<string, unknown>;
    }
    const list = (node._errors ??= []) as Array<{ code: string; message: string }>;
    list.push({ code: field.code, message: field.message });
  }
  return new DiscordApiError(400, {
    message: "Invalid Form Body",
    code: DISCORD_CODES.invalidFormBody,
    errors,
  });
}
