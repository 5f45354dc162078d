import crypto from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import {
  countCallParticipantsAmong,
  deleteCall,
  deleteCallParticipant,
  findCallId,
  insertCallIfNone,
  insertCallParticipant,
  listCallParticipants,
  lockCallId,
} from "./calls-repository.js";
import type { AppContext } from "../app-context.js";
import type { Principal } from "../auth/principal.js";
import { findLiveRoom, roomForMember } from "../chat/room-access.js";
import { isMember } from "../chat/rooms-repository.js";
import { AppError } from "../errors/app-error.js";
import type { Database } from "../db/schema.js";
import type { IceServer } from "../config/load-config.js";
import { iceServersFor } from "./ice-servers.js";
import { eventData } from "../events/event-catalogue.js";
import type { Tx } from "../db/unit-of-work.js";

type Db = Kysely<Database> | Transaction<Database>;

export interface CallView {
  callId: string;
  participants: string[];
}

export interface CallState {
  callId: string | null;
  participants: string[];
  iceServers: IceServer[];
}

/**
 * A member joins the room's call (starting it when there is none); fires USER_JOINED_ROOM via
 * "call" the first time (in a direct message to its members' live streams only: outbound webhooks
 * hear nothing of a DM until it is promoted). Joining again answers the same call and fires nothing.
 */
export async function joinCall(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
): Promise<CallView> {
  await roomForMember(ctx.db, roomId, actor);
  return ctx.database.transaction(async (tx) => {
    const now = ctx.now();
    await insertCallIfNone(tx.db, {
      roomId,
      callId: `call_${crypto.randomBytes(12).toString("base64url")}`,
      startedAt: now,
    });
    const callId = (await lockCallId(tx.db, roomId))!;
    const joined = await insertCallParticipant(tx.db, {
      roomId,
      userId: actor.userId,
      username: actor.username,
      joinedAt: now,
    });
    if (joined)
      await tx.emit(
        "USER_JOINED_ROOM",
        eventData.roomMembership({ roomId, username: actor.username, via: "call" }),
      );
    return { callId, participants: await listCallParticipants(tx.db, roomId) };
  });
}

/**
 * Takes the user out of the room's call inside `tx` (fires USER_LEFT_ROOM via "call" when they
 * were in it); the call ends with its last participant.
 * Used by the leave route, when the user leaves the room, and when their presence in it ends.
 */
export async function leaveCallIn(
  ctx: AppContext,
  tx: Tx,
  roomId: number,
  user: { userId: number; username: string },
): Promise<boolean> {
  if ((await lockCallId(tx.db, roomId)) === undefined) return false;
  if (!(await deleteCallParticipant(tx.db, roomId, user.userId))) return false;
  await tx.emit(
    "USER_LEFT_ROOM",
    eventData.roomMembership({ roomId, username: user.username, via: "call" }),
  );
  if ((await listCallParticipants(tx.db, roomId)).length === 0) await deleteCall(tx.db, roomId);
  return true;
}

/**
 * Leaves the room's call; a member gets the same answer whether or not they were in it. Anyone
 * else is refused (403 not_a_member, as joining and reading the call are), unless they were still
 * in the call.
 */
export async function leaveCall(ctx: AppContext, actor: Principal, roomId: number): Promise<void> {
  await findLiveRoom(ctx.db, roomId);
  const left = await ctx.database.transaction((tx) => leaveCallIn(ctx, tx, roomId, actor));
  if (!left && !(await isMember(ctx.db, roomId, actor.userId)))
    throw new AppError("not_a_member", `you are not a member of room ${roomId}`);
}

/**
 * The room's current call (callId null when none) and the ICE servers the caller may use for it
 * (their own short-lived TURN credential; none for a bot); members only.
 */
export async function getCall(
  ctx: AppContext,
  actor: Principal,
  roomId: number,
): Promise<CallState> {
  await roomForMember(ctx.db, roomId, actor);
  const callId = await findCallId(ctx.db, roomId);
  return {
    callId: callId ?? null,
    participants: callId ? await listCallParticipants(ctx.db, roomId) : [],
    iceServers: iceServersFor(ctx.config, actor, ctx.now()),
  };
}

/** True when both users are (distinct) participants of the room's call: who may signal whom. */
export async function inSameCall(
  db: Db,
  roomId: number,
  from: string,
  to: string,
): Promise<boolean> {
  if (from === to) return false;
  return (await countCallParticipantsAmong(db, roomId, [from, to])) === 2;
}
