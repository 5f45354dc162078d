/**
 * How the page is signed in, the API calls it makes, and the browser-safe parts of
 * @parley/client. Two ways in: a session (password, invitation or single sign-on), whose cookie
 * the browser sends and whose unsafe requests carry the X-Parley-CSRF header; or a pasted token
 * (bots, scripts, tests), kept in sessionStorage and sent as a Bearer token.
 */
import { NetworkError, RequestError, request } from "@parley/client/browser";

export { createStreamClient } from "@parley/client/browser";
export type {
  ReactionData,
  StreamClient,
  StreamEventFrame,
  StreamMessage,
  StreamState,
} from "@parley/client/browser";

const TOKEN_KEY = "parley.chat.token";

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token.trim().replace(/^bearer\s+/i, ""));
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

export interface Room {
  id: number;
  name: string | null;
  kind: "room" | "dm";
  visibility?: "public" | "private";
  topic?: string | null;
  /** A DM's other person (null when they left). */
  peer?: { id: number; username: string; displayName: string } | null;
  memberCount?: number;
  /** For a member: from the server's read marker. */
  unreadCount?: number;
  mentionCount?: number;
  lastReadMessageId?: number;
  /** In the public list: whether the user is a member. */
  joined?: boolean;
}

/** What a room is called on the page: its name, or a DM's other person. */
export function roomName(room: Room): string {
  return room.name ?? room.peer?.displayName ?? "Direct message";
}

export interface DirectoryUser {
  id: number;
  username: string;
  displayName: string;
}

export interface Reaction {
  emoji: string;
  count: number;
  /** The first 20 who reacted. */
  usernames: string[];
}

export interface Message {
  id: number;
  roomId: number;
  content: string;
  contentFormat: "markdown" | "html";
  sender: { type?: "user" | "integration"; username: string | null; displayName: string };
  createdAt: string;
  threadId: number | null;
  replyCount: number;
  lastReplyAt: string | null;
  revision: number;
  editedAt: string | null;
  /** Its creation, then its latest change (an edit, a reply in its thread, a reaction). */
  updatedAt: string;
  /** One entry per emoji, in the order each was first used. */
  reactions: Reaction[];
  /** Files posted with it (images are previewed). */
  files?: MessageFile[];
  /** `QUARANTINED`: hidden from everyone but its sender (and admins) until a moderator approves it. */
  moderationStatus?: string;
}

export interface MessageFile {
  id: number;
  name: string;
  size: number;
  mediaType: string;
}

/** A message a search found; `snippet` is escaped text with the matched words in `<mark>`. */
export interface SearchHit {
  roomId: number;
  messageId: number;
  threadId: number | null;
  createdAt: string;
  snippet: string;
}

/** What GET /api/search narrows a search to: one room or DM, one sender, before a time. */
export interface SearchFilters {
  roomId?: number | undefined;
  /** A sender's username (a leading `@` allowed). */
  from?: string | undefined;
  /** ISO-8601: messages created before it. */
  before?: string | undefined;
}

/** A deleted message as lists show it: its content and revisions are gone. */
export interface Tombstone {
  id: number;
  roomId: number;
  threadId: number | null;
  deleted: true;
  deletedAt: string;
}

export type ListItem = Message | Tombstone;

export function isTombstone(item: ListItem): item is Tombstone {
  return "deleted" in item && item.deleted === true;
}

interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Signed in with the session cookie (and its CSRF value), or with a pasted token. */
export type Auth = { kind: "session"; csrfToken: string } | { kind: "token"; token: string };

export interface User {
  id: number;
  username: string;
  displayName: string;
  role?: string;
}

export interface Providers {
  password: boolean;
  oidc: { name: string; startUrl: string } | null;
}

const anonymous = request.defaults({ baseUrl: location.origin });
const open = async <T>(route: string, parameters: Record<string, unknown> = {}) =>
  (await anonymous(route, parameters)).data as T;

/** Calls made before there is a session, or to find whether there is one. */
export const signInApi = {
  providers: () => open<Providers>("GET /api/auth/providers"),
  login: (username: string, password: string) =>
    open<{ user: User }>("POST /api/auth/login", { username, password }),
  acceptInvite: (token: string, username: string, password: string) =>
    open<{ user: User }>("POST /api/auth/accept-invite", { token, username, password }),
  /** A sign-in reset link's token and the new password: signs in. */
  resetPassword: (token: string, password: string) =>
    open<{ user: User }>("POST /api/auth/reset-password", { token, password }),
  /** The session's CSRF value when the browser holds a live session cookie (else a 401). */
  csrf: () => open<{ csrfToken: string }>("GET /api/auth/csrf"),
};

/** The few API calls the page makes, as plain functions. */
export function createApi(auth: Auth) {
  const headers: Record<string, string> =
    auth.kind === "token"
      ? { authorization: `Bearer ${auth.token}` }
      : { "x-parley-csrf": auth.csrfToken };
  const api = request.defaults({ baseUrl: location.origin, headers });
  /** Plain fetch for bytes (uploads, downloads), with the same credentials. */
  const bytes = async (path: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(path, { ...init, headers });
    if (!response.ok) {
      const problem = (await response.json().catch(() => undefined)) as
        { detail?: string; title?: string } | undefined;
      throw new Error(
        problem?.detail ?? problem?.title ?? `The server answered ${response.status}.`,
      );
    }
    return response;
  };
  const call = async <T>(route: string, parameters: Record<string, unknown> = {}) =>
    (await api(route, parameters)).data as T;
  return {
    me: () => call<User>("GET /api/me"),
    logout: () => call<void>("POST /api/auth/logout"),
    /** Admins: a single-use link that creates a user (7 days). */
    invite: (role: "user" | "admin", displayName?: string) =>
      call<{ url: string; expiresAt: string }>("POST /api/admin/invites", {
        role,
        ...(displayName ? { displayName } : {}),
      }),
    rooms: () => call<Page<Room>>("GET /api/rooms", { limit: 200 }),
    publicRooms: (query: string) =>
      call<Page<Room>>("GET /api/rooms", {
        scope: "public",
        limit: 100,
        ...(query ? { query } : {}),
      }),
    join: (roomId: number) => call<Room>("POST /api/rooms/{roomId}/join", { roomId }),
    room: (roomId: number) => call<Room>("GET /api/rooms/{roomId}", { roomId }),
    createRoom: (name: string, visibility: "public" | "private" = "public") =>
      call<Room>("POST /api/rooms", { name, visibility }),
    /** Adds someone to a room the user is a member of (a private room's only way in). */
    addMember: (roomId: number, userId: number) =>
      call<Room>("POST /api/rooms/{roomId}/members", { roomId, userId }),
    users: (query: string) => call<{ items: DirectoryUser[] }>("GET /api/users", { query }),
    openDm: (username: string) => call<Room>("POST /api/dms", { username }),
    markRead: (roomId: number, messageId: number) =>
      call<{ unreadCount: number; mentionCount: number }>("PUT /api/rooms/{roomId}/read", {
        roomId,
        messageId,
      }),
    /** Top-level messages, newest first (deleted ones as tombstones). */
    messages: (roomId: number, cursor?: string) =>
      call<Page<ListItem>>("GET /api/rooms/{roomId}/messages", {
        roomId,
        limit: 30,
        ...(cursor ? { cursor } : {}),
      }),
    /** A thread's replies, oldest first. */
    replies: (roomId: number, threadId: number, cursor?: string) =>
      call<Page<ListItem>>("GET /api/rooms/{roomId}/messages", {
        roomId,
        threadId,
        limit: 100,
        ...(cursor ? { cursor } : {}),
      }),
    /** The room's messages (both levels, tombstones too) changed after `since`, oldest first. */
    changes: (roomId: number, since: string, cursor?: string) =>
      call<Page<ListItem>>("GET /api/rooms/{roomId}/messages", {
        roomId,
        updatedSince: since,
        limit: 100,
        ...(cursor ? { cursor } : {}),
      }),
    post: (roomId: number, content: string, threadId?: number, fileIds: number[] = []) =>
      call<Message>("POST /api/rooms/{roomId}/messages", {
        roomId,
        content,
        ...(threadId === undefined ? {} : { threadId }),
        ...(fileIds.length > 0 ? { fileIds } : {}),
      }),
    /** Uploads a file to the room; answers its id (to post it with `fileIds`). */
    upload: async (roomId: number, file: File): Promise<{ id: number }> => {
      const form = new FormData();
      form.append("file", file, file.name);
      const response = await bytes(`/api/rooms/${roomId}/files`, { method: "POST", body: form });
      return (await response.json()) as { id: number };
    },
    /** A file's bytes (a token cannot ride on an <img> or a link, so the page fetches them). */
    file: async (roomId: number, fileId: number): Promise<Blob> =>
      (await bytes(`/api/rooms/${roomId}/files/${fileId}`)).blob(),
    /** Whether the browser sends the credentials by itself (the session cookie). */
    cookie: auth.kind === "session",
    search: (q: string, filters: SearchFilters = {}, cursor?: string) =>
      call<Page<SearchHit>>("GET /api/search", {
        q,
        limit: 20,
        ...(filters.roomId === undefined ? {} : { roomId: filters.roomId }),
        ...(filters.from ? { from: filters.from } : {}),
        ...(filters.before ? { before: filters.before } : {}),
        ...(cursor ? { cursor } : {}),
      }),
    edit: (roomId: number, messageId: number, content: string) =>
      call<Message>("PATCH /api/rooms/{roomId}/messages/{messageId}", {
        roomId,
        messageId,
        content,
      }),
    remove: (roomId: number, messageId: number) =>
      call<void>("DELETE /api/rooms/{roomId}/messages/{messageId}", { roomId, messageId }),
    react: (roomId: number, messageId: number, emoji: string) =>
      call<void>("PUT /api/rooms/{roomId}/messages/{messageId}/reactions/{emoji}", {
        roomId,
        messageId,
        emoji,
      }),
    unreact: (roomId: number, messageId: number, emoji: string) =>
      call<void>("DELETE /api/rooms/{roomId}/messages/{messageId}/reactions/{emoji}", {
        roomId,
        messageId,
        emoji,
      }),
    callState: (roomId: number) =>
      call<{ callId: string | null; participants: string[]; iceServers: RTCIceServer[] }>(
        "GET /api/rooms/{roomId}/call",
        { roomId },
      ),
    joinCall: (roomId: number) =>
      call<{ callId: string; participants: string[] }>("POST /api/rooms/{roomId}/call/join", {
        roomId,
      }),
    leaveCall: (roomId: number) => call<void>("POST /api/rooms/{roomId}/call/leave", { roomId }),
  };
}

export type Api = ReturnType<typeof createApi>;

export function describeError(error: unknown): string {
  if (error instanceof RequestError) {
    const problem = error.problem;
    if (problem !== undefined) return problem.detail || problem.title || problem.code;
    return `The server answered ${error.status}.`;
  }
  if (error instanceof NetworkError) return `The server could not be reached (${error.message}).`;
  return error instanceof Error ? error.message : String(error);
}

export function isUnauthorized(error: unknown): boolean {
  return error instanceof RequestError && error.status === 401;
}
