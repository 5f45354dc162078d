/**
 * The session (a token kept in sessionStorage) and the browser-safe parts of @parley/client.
 */
import { NetworkError, RequestError, request } from "@parley/client/browser";

export { createStreamClient } from "@parley/client/browser";
export type {
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
}

export interface Message {
  id: number;
  roomId: number;
  content: string;
  contentFormat: "markdown" | "html";
  sender: { username: string | null; displayName: string };
  createdAt: string;
}

interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** The few API calls the page makes, as plain functions. */
export function createApi(token: string) {
  const api = request.defaults({
    baseUrl: location.origin,
    headers: { authorization: `Bearer ${token}` },
  });
  const call = async <T>(route: string, parameters: Record<string, unknown> = {}) =>
    (await api(route, parameters)).data as T;
  return {
    rooms: () => call<Page<Room>>("GET /api/rooms", { limit: 200 }),
    createRoom: (name: string) => call<Room>("POST /api/rooms", { name }),
    messages: async (roomId: number, cursor?: string): Promise<Page<Message>> => {
      const page = await call<Page<Message | { id: number; deleted: true }>>(
        "GET /api/rooms/{roomId}/messages",
        { roomId, limit: 30, ...(cursor ? { cursor } : {}) },
      );
      // The page does not show deleted messages (their tombstones) yet.
      return {
        ...page,
        items: page.items.filter((item): item is Message => !("deleted" in item)),
      };
    },
    post: (roomId: number, content: string) =>
      call<Message>("POST /api/rooms/{roomId}/messages", { roomId, content }),
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
