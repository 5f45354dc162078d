import WebSocket from "ws";
import {
  createStreamClient,
  type StreamEventFrame,
  type WebSocketConstructor,
} from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { EXIT } from "./exit-codes.js";

export interface StreamRoomOptions {
  room: string;
  after?: string;
  json?: boolean;
}

/** One line per frame: what a person tailing the room wants to read. */
export function describeFrame(frame: StreamEventFrame): string {
  switch (frame.event) {
    case "MESSAGE_CREATED": {
      const { message } = frame.data;
      const who = message.sender.username ?? message.sender.displayName;
      return `${message.createdAt} #${message.id} ${who}: ${message.contentText.replace(/\s*\n\s*/g, " ")}`;
    }
    case "MESSAGE_UPDATED": {
      const { message } = frame.data;
      const who = message.sender.username ?? message.sender.displayName;
      return `${frame.data.editedAt} #${message.id} ${who} edited (revision ${frame.data.revision}): ${message.contentText.replace(/\s*\n\s*/g, " ")}`;
    }
    case "MESSAGE_DELETED":
      return `${frame.data.deletedAt} #${frame.data.messageId} deleted by ${frame.data.deletedBy}`;
    case "REACTION_ADDED":
      return `${new Date().toISOString()} #${frame.data.messageId} ${frame.data.username} reacted ${frame.data.emoji}`;
    case "REACTION_REMOVED":
      return `${new Date().toISOString()} #${frame.data.messageId} ${frame.data.username} took back ${frame.data.emoji}`;
    case "USER_JOINED_ROOM":
      return `${new Date().toISOString()} ${frame.data.username} joined (${frame.data.via})`;
    case "USER_LEFT_ROOM":
      return `${new Date().toISOString()} ${frame.data.username} left (${frame.data.via})`;
    case "ROOM_DELETED":
      return `${new Date().toISOString()} the room was deleted by ${frame.data.deletedBy}`;
  }
}

/**
 * `parley stream --room <id>`: tails a room live through the stream, reconnecting and resuming by
 * itself, until interrupted (or the room is deleted, or the token is refused).
 */
export async function streamRoom(
  io: CliIo,
  options: StreamRoomOptions,
  signal?: AbortSignal,
): Promise<void> {
  const roomId = Number(options.room);
  if (!Number.isSafeInteger(roomId) || roomId < 1)
    throw new CliError(`--room must be a room id, got "${options.room}"`);
  const after = options.after === undefined ? undefined : Number(options.after);
  if (after !== undefined && (!Number.isSafeInteger(after) || after < 0))
    throw new CliError(`--after must be a message id, got "${options.after}"`);
  const { baseUrl } = apiFromEnv(io.env);
  const client = createStreamClient({
    baseUrl,
    token: io.env.PARLEY_TOKEN!,
    WebSocket: WebSocket as unknown as WebSocketConstructor,
  });
  await new Promise<void>((resolve, reject) => {
    const finish = (error?: Error) => {
      client.close();
      if (error) reject(error);
      else resolve();
    };
    signal?.addEventListener("abort", () => finish());
    process.once("SIGINT", () => finish());
    client.on("ready", (user) =>
      io.err(`streaming room ${roomId} as ${user.username} (Ctrl-C to stop)`),
    );
    client.on("state", (state) => {
      if (state === "reconnecting") io.err("connection lost; reconnecting…");
    });
    client.on("presence", (room, present) => {
      if (options.json) io.out(JSON.stringify({ type: "presence", roomId: room, present }));
      else io.out(`present: ${present.join(", ") || "nobody"}`);
    });
    client.on("event", (frame) => {
      io.out(options.json ? JSON.stringify(frame) : describeFrame(frame));
      if (frame.event === "ROOM_DELETED") finish();
    });
    client.on("error", (error) => {
      if (error.code === "unauthorized")
        finish(
          new CliError("the server refused PARLEY_TOKEN (4401): is it valid and unexpired?", {
            exitCode: EXIT.refused,
            code: "unauthorized",
          }),
        );
      else if (error.code === "forbidden")
        finish(
          new CliError(`room ${roomId} does not exist or you are not a member`, {
            exitCode: EXIT.notFound,
            code: "not_found",
          }),
        );
    });
    client.subscribe(roomId, after === undefined ? {} : { after });
  });
}
