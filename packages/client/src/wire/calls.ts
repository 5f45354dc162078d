/** A room's live call (WebRTC signalling itself goes over the stream, GET /api/stream). */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./common.js";

const Usernames = Type.Array(Type.String());

/** The answer to joining: the room's call, the same `callId` for everyone in it. */
export const CallSchema = Type.Object({
  callId: Type.String(),
  participants: Usernames,
});
export type Call = Static<typeof CallSchema>;

/** An RTCIceServer, as WebRTC takes it (PARLEY_ICE_SERVERS, PARLEY_TURN_SECRET). */
export const IceServerSchema = Type.Object({
  urls: Type.Union([Type.String(), Usernames]),
  username: Type.Optional(Type.String()),
  credential: Type.Optional(Type.String()),
});
export type IceServer = Static<typeof IceServerSchema>;

/** The room's current call (`callId` null when there is none) and the ICE servers to use. */
export const CallStateSchema = Type.Object({
  callId: Nullable(Type.String()),
  participants: Usernames,
  iceServers: Type.Array(IceServerSchema, {
    description:
      "RTCIceServer objects for the caller: STUN from PARLEY_ICE_SERVERS; TURN with a short-lived credential of the caller's own (PARLEY_TURN_SECRET), none for bots",
  }),
});
export type CallState = Static<typeof CallStateSchema>;
