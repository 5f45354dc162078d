/**
 * Parley's chat page at /app/: sign in with a token, pick a room, read its history (older
 * messages load as you scroll up), write with a markdown preview (`@` completes names), edit and
 * delete your own messages, reply in threads, see who is present and which rooms have unread
 * messages, and start or join a peer-to-peer call. Live updates (new, edited and deleted messages)
 * come from the stream (createStreamClient from @parley/client), which reconnects and resumes by
 * itself; a banner shows while it does, and the room catches up on edits and deletions after.
 */
import {
  createApi,
  createStreamClient,
  describeError,
  forgetToken,
  isUnauthorized,
  storedToken,
  storeToken,
  isTombstone,
  roomName,
  signInApi,
  type Api,
  type Auth,
  type ListItem,
  type Message,
  type ReactionData,
  type Room,
  type StreamClient,
} from "./api.js";
import { Call } from "./call.js";
import { composer } from "./composer.js";
import { pickEmoji } from "./emoji-picker.js";
import { h, replaceChildren } from "./dom.js";
import { peopleFinder, roomBrowser } from "./directory.js";
import { addPeoplePanel } from "./add-people.js";
import { attachments, messageFiles } from "./files.js";
import { invitePanel } from "./invite.js";
import { searchBox, searchResults } from "./search.js";
import { messageItem, type MessageActions } from "./message-item.js";
import { mutedRooms, type MutedRooms } from "./muted-rooms.js";
import { notificationButton, notify } from "./notify.js";
import { signInScreen } from "./sign-in.js";
import { threadPanel, type ThreadPanel } from "./thread-panel.js";

const app = document.getElementById("app")!;

interface Session {
  auth: Auth;
  api: Api;
  stream: StreamClient;
  username: string;
  /** From GET /api/me (undefined on a server without it). */
  role: string | undefined;
  rooms: Room[];
  unread: Map<number, number>;
  /** Messages after the read marker that mention the user, by room. */
  mentions: Map<number, number>;
  /** The newest message id this page told the server was read, by room. */
  readSent: Map<number, number>;
  selected: number | undefined;
  /** Top-level messages of the selected room by id (live frames and pages may overlap). */
  messages: Map<number, ListItem>;
  /** Replies of the open thread by id. */
  replies: Map<number, ListItem>;
  /** Reply counts of deleted top-level messages (their tombstones carry none). */
  tombstoneReplies: Map<number, number>;
  thread: ThreadPanel | undefined;
  nextCursor: string | null;
  loadingOlder: boolean;
  /** The latest change the selected room's messages show (server time), for catching up. */
  since: string | undefined;
  call: Call | undefined;
  muted: MutedRooms;
}

let session: Session | undefined;

function signIn(notice?: string): void {
  session?.stream.close();
  session?.call?.close();
  session = undefined;
  signInScreen(app, {
    notice,
    invite: inviteToken(),
    reset: resetToken(),
    signedIn: async (auth) => {
      try {
        await start(auth);
        if (auth.kind === "token") storeToken(auth.token);
      } catch (failure) {
        session?.stream.close();
        session = undefined;
        throw isUnauthorized(failure) ? new Error("That token was not accepted.") : failure;
      }
    },
  });
}

/** The token of an invitation link (`/app/#invite=<token>`). */
function inviteToken(): string | undefined {
  const match = /^#invite=([^&]+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

/** The token of a sign-in reset link (`/app/#reset=<token>`), which an admin made. */
function resetToken(): string | undefined {
  const match = /^#reset=([^&]+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

async function start(auth: Auth): Promise<void> {
  const api = createApi(auth);
  const [rooms, me] = await Promise.all([
    api.rooms().then((page) => page.items),
    api.me().catch((error: unknown) => {
      if (isUnauthorized(error)) throw error;
      return undefined;
    }),
  ]);
  // A session authenticates the stream with its cookie: an empty token says so (docs/realtime.md).
  const stream = createStreamClient({
    baseUrl: location.origin,
    token: auth.kind === "token" ? auth.token : "",
  });
  const ready = new Promise<string>((resolve, reject) => {
    stream.on("ready", (user) => resolve(user.username));
    stream.on("error", (error) => {
      if (error.code === "unauthorized") reject(new Error("That token was not accepted."));
    });
  });
  const username = await ready;
  session = {
    auth,
    api,
    stream,
    username,
    role: me?.role,
    rooms,
    unread: new Map(rooms.map((room) => [room.id, room.unreadCount ?? 0])),
    mentions: new Map(rooms.map((room) => [room.id, room.mentionCount ?? 0])),
    readSent: new Map(rooms.map((room) => [room.id, room.lastReadMessageId ?? 0])),
    selected: undefined,
    messages: new Map(),
    replies: new Map(),
    tombstoneReplies: new Map(),
    thread: undefined,
    nextCursor: null,
    loadingOlder: false,
    since: undefined,
    call: undefined,
    muted: mutedRooms(username),
  };
  let wasAway = false;
  stream.on("state", (state) => {
    showBanner(state);
    if (state === "reconnecting") wasAway = true;
    if (state === "open" && wasAway) {
      wasAway = false;
      void catchUp();
    }
  });
  stream.on("event", (frame) => {
    if (frame.event === "MESSAGE_CREATED")
      onMessage(frame.roomId, frame.data.message, frame.data.mentions);
    if (frame.event === "MESSAGE_UPDATED" && frame.roomId === session?.selected) {
      if (update(frame.data.message))
        announce(`${frame.data.message.sender.displayName} edited a message.`);
    }
    if (frame.event === "MESSAGE_DELETED" && frame.roomId === session?.selected) {
      const { messageId, roomId, threadId, deletedAt } = frame.data;
      if (update({ id: messageId, roomId, threadId, deleted: true, deletedAt }))
        announce(`${frame.data.deletedBy} deleted a message.`);
    }
    if (
      (frame.event === "REACTION_ADDED" || frame.event === "REACTION_REMOVED") &&
      frame.roomId === session?.selected
    )
      onReaction(frame.data, frame.event === "REACTION_ADDED");
    if (frame.event === "ROOM_DELETED") {
      session!.rooms = session!.rooms.filter((room) => room.id !== frame.roomId);
      if (session!.selected === frame.roomId) session!.selected = undefined;
      renderShell();
    }
  });
  stream.on("read", ({ roomId, messageId }) => onRead(roomId, messageId));
  stream.on("roomAdded", ({ roomId, kind, by }) => void onRoomAdded(roomId, kind, by));
  stream.on("typing", ({ roomId, username }) => onTyping(roomId, username));
  stream.on("presence", (roomId) => {
    if (roomId === session?.selected) renderPresence();
  });
  stream.on("error", (error) => {
    if (error.code === "unauthorized") signIn("The session ended: sign in again.");
  });
  for (const room of rooms) stream.subscribe(room.id);
  renderShell();
  // A phone starts on the room list (with the first room ready behind it).
  if (rooms[0]) await selectRoom(rooms[0].id, false);
}

function onMessage(roomId: number, message: Message, mentions: string[] = []): void {
  const s = session!;
  notifyOf(roomId, message, mentions);
  if (message.sender.username) stoppedTyping(roomId, message.sender.username);
  if (roomId !== s.selected || document.visibilityState === "hidden") {
    // Counted as the server counts: top-level messages of others, and every mention of the user.
    if (message.sender.username !== s.username) {
      if (message.threadId === null) s.unread.set(roomId, (s.unread.get(roomId) ?? 0) + 1);
      if (mentions.some((name) => name.toLowerCase() === s.username.toLowerCase()))
        s.mentions.set(roomId, (s.mentions.get(roomId) ?? 0) + 1);
      renderRooms();
    }
    if (roomId !== s.selected) return;
  } else {
    markRead(roomId, message.id);
  }
  noteChange(message.createdAt);
  if (message.threadId !== null) {
    onReply(message);
    return;
  }
  const list = document.getElementById("messages");
  const known = s.messages.get(message.id);
  // Held for review until now: a moderator approved it.
  if (known && !isTombstone(known) && known.moderationStatus === "QUARANTINED") show(message);
  if (!list || known) return;
  const stuck = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  s.messages.set(message.id, message);
  list.append(render(message, true));
  if (stuck || message.sender.username === s.username) list.scrollTop = list.scrollHeight;
}

/**
 * Moves the user's read marker of the room to `messageId` (never back: the server keeps the
 * larger one too) and clears the room's counts. The server tells the user's other tabs.
 */
function markRead(roomId: number, messageId: number): void {
  const s = session!;
  s.unread.delete(roomId);
  s.mentions.delete(roomId);
  renderRooms();
  if (messageId <= (s.readSent.get(roomId) ?? 0)) return;
  s.readSent.set(roomId, messageId);
  s.api.markRead(roomId, messageId).catch(() => {
    // An older server without read markers: the page's own counts still work.
  });
}

/** The newest message the selected room shows. */
function newestShown(): number | undefined {
  const s = session!;
  let newest: number | undefined;
  for (const id of s.messages.keys()) if (newest === undefined || id > newest) newest = id;
  return newest;
}

/** Another tab of the user read up to `messageId`: the counts come again from the server. */
function onRead(roomId: number, messageId: number): void {
  const s = session!;
  if (messageId > (s.readSent.get(roomId) ?? 0)) s.readSent.set(roomId, messageId);
  clearTimeout(recount);
  recount = setTimeout(() => void refreshRooms(), 100);
}

let recount: ReturnType<typeof setTimeout> | undefined;

/**
 * Someone opened a DM with the user, or added them to a room (or another tab of theirs opened a
 * DM): listed and followed at once. Followed first, then read, so a message posted meanwhile is
 * either in the room's counts or comes as a frame.
 */
async function onRoomAdded(roomId: number, kind: "room" | "dm", by: string): Promise<void> {
  const s = session;
  if (!s || s.rooms.some((room) => room.id === roomId)) return;
  s.stream.subscribe(roomId);
  try {
    const room = await s.api.room(roomId);
    if (session !== s || s.rooms.some((known) => known.id === roomId)) return;
    s.rooms.push(room);
    // Frames that came while it was read are counted already; the server's count may hold them.
    s.unread.set(roomId, Math.max(room.unreadCount ?? 0, s.unread.get(roomId) ?? 0));
    s.mentions.set(roomId, Math.max(room.mentionCount ?? 0, s.mentions.get(roomId) ?? 0));
    renderRooms();
    if (by !== s.username)
      announce(
        kind === "dm"
          ? `${by} opened a direct message with you.`
          : `${by} added you to ${roomName(room)}.`,
      );
  } catch (error) {
    if (isUnauthorized(error)) showError(error);
  }
}

/**
 * The room list again from the server: its unread and mention counts, and rooms and DMs the page
 * does not know yet (a `room_added` frame missed while the stream reconnected). Run on a read
 * frame, when the page shows again, and every 15 s.
 */
async function refreshRooms(): Promise<void> {
  const s = session;
  if (!s) return;
  try {
    const page = await s.api.rooms();
    if (session !== s) return;
    for (const room of page.items) {
      const known = s.rooms.findIndex((candidate) => candidate.id === room.id);
      if (known === -1) {
        s.rooms.push(room);
        s.stream.subscribe(room.id);
      } else {
        s.rooms[known] = room;
      }
      if (room.id === s.selected && document.visibilityState === "visible") continue;
      s.unread.set(room.id, room.unreadCount ?? 0);
      s.mentions.set(room.id, room.mentionCount ?? 0);
    }
    renderRooms();
  } catch (error) {
    if (isUnauthorized(error)) showError(error);
  }
}

document.addEventListener("visibilitychange", () => {
  const s = session;
  if (!s || document.visibilityState !== "visible") return;
  const newest = newestShown();
  if (s.selected !== undefined && newest !== undefined) markRead(s.selected, newest);
  void refreshRooms();
});
setInterval(() => void refreshRooms(), 15_000);

/** A DM, or a mention of the user, while the page is hidden: a browser notification. */
function notifyOf(roomId: number, message: Message, mentions: string[]): void {
  const s = session!;
  if (message.sender.username === s.username || s.muted.has(roomId)) return;
  const room = s.rooms.find((candidate) => candidate.id === roomId);
  const me = s.username.toLowerCase();
  const isDm = room?.kind === "dm";
  if (!isDm && !mentions.some((name) => name.toLowerCase() === me)) return;
  notify(
    {
      roomId,
      messageId: message.id,
      from: message.sender.displayName,
      roomName: isDm || !room ? undefined : roomName(room),
      content: message.content,
    },
    (id) => void selectRoom(id),
  );
}

/**
 * The user's own message as the server answered the post. A quarantined one never comes over the
 * stream (only its sender and admins may see it): it is shown here, marked "held for review".
 */
function posted(message: Message): void {
  const s = session!;
  clearError();
  if (message.moderationStatus !== "QUARANTINED" || message.roomId !== s.selected) return;
  if (message.threadId === null) {
    const list = document.getElementById("messages");
    if (!list || s.messages.has(message.id)) return;
    s.messages.set(message.id, message);
    list.append(render(message, true));
    list.scrollTop = list.scrollHeight;
  } else if (s.thread?.parentId === message.threadId && !s.replies.has(message.id)) {
    s.replies.set(message.id, message);
    s.thread.replies.append(render(message, false));
    s.thread.replies.scrollTop = s.thread.replies.scrollHeight;
  }
}

/** Someone reacted, or took a reaction back: the message's counts follow. */
function onReaction({ messageId, emoji, username }: ReactionData, added: boolean): void {
  const s = session!;
  const known = s.messages.get(messageId) ?? s.replies.get(messageId);
  if (known === undefined || isTombstone(known)) return;
  const reactions = known.reactions.map((reaction) => ({
    ...reaction,
    usernames: [...reaction.usernames],
  }));
  let reaction = reactions.find((candidate) => candidate.emoji === emoji);
  if (added) {
    if (!reaction) reactions.push((reaction = { emoji, count: 0, usernames: [] }));
    reaction.count++;
    if (reaction.usernames.length < 20 && !reaction.usernames.includes(username))
      reaction.usernames.push(username);
  } else if (reaction) {
    reaction.count--;
    reaction.usernames = reaction.usernames.filter((name) => name !== username);
  }
  show({ ...known, reactions: reactions.filter((candidate) => candidate.count > 0) });
  if (username !== s.username)
    announce(`${username} ${added ? "reacted" : "took back a reaction"} ${emoji}.`);
}

/** A reply: counted on its thread's first message, and shown if that thread is open. */
function onReply(reply: Message): void {
  const s = session!;
  const threadId = reply.threadId!;
  const known = s.replies.get(reply.id);
  if (known && !isTombstone(known) && known.moderationStatus === "QUARANTINED") show(reply);
  if (s.thread?.parentId === threadId && !known) {
    s.replies.set(reply.id, reply);
    s.thread.replies.append(render(reply, false));
    s.thread.replies.scrollTop = s.thread.replies.scrollHeight;
  }
  const parent = s.messages.get(threadId);
  if (parent === undefined) return;
  if (isTombstone(parent)) {
    s.tombstoneReplies.set(threadId, (s.tombstoneReplies.get(threadId) ?? 0) + 1);
    show(parent);
  } else {
    show({ ...parent, replyCount: parent.replyCount + 1, lastReplyAt: reply.createdAt });
  }
}

/**
 * A message as it now is (an edit, a deletion, a new reply count): kept, and shown wherever the
 * page shows it. Answers whether the page shows it. An edit older than what is shown is ignored.
 */
function update(item: ListItem): boolean {
  const s = session!;
  const known = s.messages.get(item.id) ?? s.replies.get(item.id);
  if (known === undefined) return false;
  if (isTombstone(known)) return false;
  if (!isTombstone(item) && item.revision < known.revision) return false;
  if (isTombstone(item) && item.threadId === null && known.replyCount > 0)
    s.tombstoneReplies.set(item.id, known.replyCount);
  noteChange(changedAt(item));
  show(isTombstone(item) ? item : merged(known, item));
  return true;
}

/** `item`, keeping a reply count that grew since it was read (a reply's frame came first). */
function merged(known: Message, item: Message): Message {
  return { ...item, replyCount: Math.max(item.replyCount, known.replyCount) };
}

/** Keeps `item` and redraws it wherever it shows; answers the element where focus was, or the first. */
function show(item: ListItem): HTMLElement | undefined {
  const s = session!;
  if (s.messages.has(item.id)) s.messages.set(item.id, item);
  if (s.replies.has(item.id)) s.replies.set(item.id, item);
  let answer: HTMLElement | undefined;
  for (const element of document.querySelectorAll<HTMLElement>(`[data-message-id="${item.id}"]`)) {
    // Not under the author's hands: an open edit box or delete question stays; `refresh` after.
    if (element.querySelector("form.edit, .confirm")) continue;
    const inThread = element.closest("#thread") !== null;
    const next = render(item, !inThread);
    const hadFocus = element.contains(document.activeElement);
    const focusedAction = (document.activeElement as HTMLElement | null)?.dataset.action;
    element.replaceWith(next);
    if (hadFocus) {
      const again = focusedAction
        ? next.querySelector<HTMLElement>(`[data-action="${CSS.escape(focusedAction)}"]`)
        : null;
      (again ?? next).focus();
      answer = next;
    }
    answer ??= next;
  }
  return answer;
}

/** Remembers the latest change seen, so a reconnect asks only for what came after it. */
function noteChange(at: string): void {
  const s = session!;
  if (s.since === undefined || at > s.since) s.since = at;
}

/** After a reconnect: the edits, deletions and reply counts the stream's resume does not replay. */
async function catchUp(): Promise<void> {
  const s = session!;
  const roomId = s.selected;
  if (roomId === undefined || s.since === undefined) return;
  try {
    let cursor: string | undefined;
    do {
      const page = await s.api.changes(roomId, s.since, cursor);
      if (s.selected !== roomId) return;
      for (const item of page.items) {
        if (isTombstone(item) || (s.messages.get(item.id) ?? s.replies.get(item.id))) update(item);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  } catch (error) {
    showError(error);
  }
}

/** Says a change others made, for screen readers (the lists say new messages themselves). */
function announce(text: string): void {
  const status = document.getElementById("live-status");
  if (status) status.textContent = text;
}

/** A message of the selected room, with the actions on it; `main`: in the room's list. */
function render(item: ListItem, main: boolean): HTMLElement {
  const s = session!;
  const actions: MessageActions = {
    me: s.username,
    edit: (message, content) => s.api.edit(message.roomId, message.id, content),
    remove: async (message) => {
      await s.api.remove(message.roomId, message.id);
      update({
        id: message.id,
        roomId: message.roomId,
        threadId: message.threadId,
        deleted: true,
        deletedAt: new Date().toISOString(),
      });
      document.getElementById(main ? "composer" : "thread-composer")?.focus();
    },
    ...(main ? { openThread: (message: Message) => void openThread(message) } : {}),
    react: (message, emoji, on) => {
      const call = on ? s.api.react : s.api.unreact;
      call(message.roomId, message.id, emoji).catch(showError);
    },
    pickEmoji,
    fail: showError,
    replace: (message) => {
      const known = s.messages.get(message.id) ?? s.replies.get(message.id);
      return show(known && !isTombstone(known) ? merged(known, message) : message);
    },
    refresh: (id) => {
      const known = s.messages.get(id) ?? s.replies.get(id);
      if (known) show(known);
    },
  };
  const replyCount = isTombstone(item) ? (s.tombstoneReplies.get(item.id) ?? 0) : 0;
  actions.files = (message) => messageFiles(s.api, message.roomId, message.files ?? []);
  return messageItem(item, actions, replyCount);
}

/** Opens a message's thread beside the room: its replies, oldest first, and a reply box. */
async function openThread(parent: Message): Promise<void> {
  const s = session!;
  const roomId = s.selected!;
  closeThread(false);
  const item = s.messages.get(parent.id) ?? parent;
  s.replies = new Map();
  const panel = threadPanel({
    parent: item,
    me: s.username,
    render: (reply) => render(reply, false),
    reply: async (content) => {
      try {
        posted(await s.api.post(roomId, content, parent.id));
      } catch (error) {
        showError(error);
        throw error;
      }
    },
    candidates: () => mentionCandidates(),
    close: () => closeThread(true),
  });
  s.thread = panel;
  const layout = document.getElementById("layout")!;
  layout.classList.add("with-thread");
  layout.append(panel.element);
  panel.focus();
  try {
    let cursor: string | undefined;
    do {
      const page = await s.api.replies(roomId, parent.id, cursor);
      if (s.thread !== panel) return;
      const fresh = page.items.filter((reply) => !s.replies.has(reply.id));
      for (const reply of fresh) s.replies.set(reply.id, reply);
      // Live replies that arrived meanwhile are newer: the page goes before them.
      const first = panel.replies.firstChild;
      for (const reply of fresh) panel.replies.insertBefore(render(reply, false), first);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  } catch (error) {
    showError(error);
  }
}

/** Closes the thread view; `returnFocus`: to the thread button of its message. */
function closeThread(returnFocus: boolean): void {
  const s = session!;
  const panel = s.thread;
  if (!panel) return;
  s.thread = undefined;
  s.replies = new Map();
  panel.element.remove();
  document.getElementById("layout")?.classList.remove("with-thread");
  if (returnFocus) {
    document
      .querySelector<HTMLElement>(
        `#messages [data-message-id="${panel.parentId}"] [data-action="thread"]`,
      )
      ?.focus();
  }
}

/**
 * The names `@` offers. Parley has no route listing a room's members, so these are the people
 * the page knows of in the room: who is present, and who wrote what it shows.
 */
function mentionCandidates(): string[] {
  const s = session!;
  const names = new Set<string>(s.selected === undefined ? [] : s.stream.present(s.selected));
  for (const item of [...s.messages.values(), ...s.replies.values()]) {
    if (!isTombstone(item) && item.sender.username) names.add(item.sender.username);
  }
  return [...names];
}

function showBanner(state: string): void {
  const banner = document.getElementById("banner");
  if (!banner) return;
  banner.hidden = state !== "reconnecting";
}

function renderShell(): void {
  const s = session!;
  closeThread(false);
  replaceChildren(
    app,
    h(
      "header",
      { class: "top" },
      h("span", { class: "brand" }, "Parley"),
      searchBox((query) => showSearch(query)),
      h("span", { class: "who", id: "me" }, s.username),
      notificationButton(),
      h(
        "button",
        {
          class: "link",
          type: "button",
          onclick: () => void signOut(),
        },
        "Sign out",
      ),
    ),
    h(
      "div",
      { id: "banner", class: "banner", role: "status", hidden: s.stream.state !== "reconnecting" },
      "Reconnecting… messages will catch up when the connection is back.",
    ),
    h(
      "div",
      { id: "layout", class: "layout" },
      h(
        "nav",
        { class: "rooms", "aria-label": "Rooms and direct messages" },
        h("h2", null, "Rooms"),
        h("ul", { id: "rooms" }),
        h(
          "button",
          {
            type: "button",
            id: "browse-rooms",
            class: "link-button",
            onclick: () => showDirectory("rooms"),
          },
          "Browse rooms",
        ),
        newRoomForm(),
        h("h2", null, "Direct messages"),
        h("ul", { id: "dms" }),
        h(
          "button",
          {
            type: "button",
            id: "find-people",
            class: "link-button",
            onclick: () => showDirectory("people"),
          },
          "Message someone",
        ),
        s.role === "admin"
          ? h(
              "button",
              {
                type: "button",
                id: "invite",
                class: "link-button",
                onclick: () => showDirectory("invite"),
              },
              "Invite someone",
            )
          : null,
      ),
      h("main", { id: "room", class: "room" }),
    ),
  );
  renderRooms();
  renderRoom();
}

/** A new room's name, and whether it is private (only its members see it; they add others). */
function newRoomForm(): HTMLFormElement {
  const input = h("input", { id: "new-room", placeholder: "New room", "aria-label": "New room" });
  const isPrivate = h("input", { id: "new-room-private", type: "checkbox" });
  return h(
    "form",
    {
      class: "new-room",
      onsubmit: (event) => {
        event.preventDefault();
        const name = input.value.trim();
        if (!name) return;
        const visibility = isPrivate.checked ? "private" : "public";
        void session!.api.createRoom(name, visibility).then((room) => {
          session!.rooms.push(room);
          session!.stream.subscribe(room.id);
          input.value = "";
          isPrivate.checked = false;
          void selectRoom(room.id);
        }, showError);
      },
    },
    input,
    h(
      "label",
      {
        class: "check",
        for: "new-room-private",
        title: "Only its members see it; they add others",
      },
      isPrivate,
      " Private",
    ),
  );
}

function renderRooms(): void {
  const s = session!;
  for (const [id, kind] of [
    ["rooms", "room"],
    ["dms", "dm"],
  ] as const) {
    const list = document.getElementById(id);
    if (!list) continue;
    replaceChildren(
      list,
      s.rooms.filter((room) => room.kind === kind).map((room) => roomLink(room)),
    );
  }
}

function roomLink(room: Room): HTMLElement {
  const s = session!;
  const unread = s.unread.get(room.id) ?? 0;
  const mentions = s.mentions.get(room.id) ?? 0;
  const muted = s.muted.has(room.id);
  return h(
    "li",
    null,
    h(
      "button",
      {
        type: "button",
        class: room.id === s.selected ? "room-link current" : "room-link",
        "data-room-id": room.id,
        onclick: () => void selectRoom(room.id),
      },
      h("span", { class: "name" }, roomName(room)),
      muted ? h("span", { class: "muted-mark", title: "Muted" }, "muted") : null,
      mentions > 0
        ? h("span", { class: "mentions", title: `${mentions} mentioning you` }, `@${mentions}`)
        : null,
      unread > 0
        ? h("span", { class: muted ? "unread muted" : "unread", title: `${unread} unread` }, unread)
        : null,
    ),
  );
}

/** The room browser, the people finder or (admins) the invitation form, in place of a room. */
function showDirectory(kind: "rooms" | "people" | "invite"): void {
  const s = session!;
  const main = document.getElementById("room");
  if (!main) return;
  s.selected = undefined;
  closeThread(false);
  renderRooms();
  document.getElementById("layout")?.classList.add("room-open");
  const options = { api: s.api, opened: (room: Room) => void opened(room), fail: showError };
  replaceChildren(
    main,
    h(
      "button",
      {
        type: "button",
        class: "secondary back",
        onclick: () => document.getElementById("layout")?.classList.remove("room-open"),
      },
      "All rooms",
    ),
    kind === "rooms"
      ? roomBrowser(options)
      : kind === "people"
        ? peopleFinder({ ...options, me: s.username })
        : invitePanel(s.api, showError),
  );
  main.querySelector<HTMLElement>("input")?.focus();
}

/** "Add people" in place of the room (see add-people.ts); back returns to the room. */
function showAddPeople(room: Room): void {
  const s = session!;
  const main = document.getElementById("room");
  if (!main) return;
  closeThread(false);
  replaceChildren(
    main,
    addPeoplePanel({
      api: s.api,
      room,
      roomName: roomName(room),
      me: s.username,
      back: () => void selectRoom(room.id),
      fail: showError,
    }),
  );
  main.querySelector<HTMLElement>("#add-people-search")?.focus();
}

/** Search results in place of a room; a hit opens its room at the message. */
function showSearch(query: string): void {
  const s = session!;
  const main = document.getElementById("room");
  if (!main) return;
  s.selected = undefined;
  closeThread(false);
  renderRooms();
  document.getElementById("layout")?.classList.add("room-open");
  replaceChildren(
    main,
    searchResults({
      api: s.api,
      query,
      rooms: s.rooms.map((room) => ({ id: room.id, name: roomName(room) })),
      roomName: (roomId) => {
        const room = s.rooms.find((candidate) => candidate.id === roomId);
        return room ? roomName(room) : `Room ${roomId}`;
      },
      open: (hit) => void jumpTo(hit.roomId, hit.threadId ?? hit.messageId),
      fail: showError,
    }),
  );
}

/** Opens a room at a message: scrolled to it (older pages loaded as needed) and marked. */
async function jumpTo(roomId: number, messageId: number): Promise<void> {
  const s = session!;
  await selectRoom(roomId);
  const find = () =>
    document.querySelector<HTMLElement>(`#messages [data-message-id="${messageId}"]`);
  // Older pages until it shows, within reason (a search hit is usually recent).
  for (let pages = 0; !find() && s.nextCursor && s.selected === roomId && pages < 20; pages++)
    await loadOlder();
  const target = find();
  if (!target) return;
  target.scrollIntoView({ block: "center" });
  target.classList.add("found");
  target.setAttribute("tabindex", "-1");
  target.focus();
}

/** A room joined, or a DM opened: listed (once), followed live, and shown. */
async function opened(room: Room): Promise<void> {
  const s = session!;
  if (!s.rooms.some((known) => known.id === room.id)) {
    s.rooms.push(room);
    s.stream.subscribe(room.id);
  }
  await selectRoom(room.id);
}

/** Shows a room; `reveal`: in place of the room list on a narrow screen (see styles.css). */
async function selectRoom(roomId: number, reveal = true): Promise<void> {
  const s = session!;
  s.selected = roomId;
  closeThread(false);
  document.getElementById("layout")?.classList.toggle("room-open", reveal);
  s.messages = new Map();
  s.tombstoneReplies = new Map();
  s.since = undefined;
  s.nextCursor = null;
  renderRooms();
  renderRoom();
  try {
    const page = await s.api.messages(roomId);
    if (s.selected !== roomId) return;
    s.nextCursor = page.nextCursor;
    const list = document.getElementById("messages")!;
    const fresh = page.items.filter((message) => !s.messages.has(message.id)).reverse();
    for (const message of fresh) s.messages.set(message.id, message);
    for (const message of fresh) noteChange(changedAt(message));
    list.prepend(...fresh.map((message) => render(message, true)));
    list.scrollTop = list.scrollHeight;
    const newest = newestShown();
    if (newest !== undefined && document.visibilityState === "visible") markRead(roomId, newest);
    else if (newest === undefined) markRead(roomId, 0);
    // A short first page leaves nothing to scroll: fetch older ones until there is.
    while (list.scrollHeight <= list.clientHeight && s.nextCursor && s.selected === roomId)
      await loadOlder();
  } catch (error) {
    showError(error);
  }
}

async function loadOlder(): Promise<void> {
  const s = session!;
  const roomId = s.selected;
  if (roomId === undefined || s.loadingOlder || !s.nextCursor) return;
  s.loadingOlder = true;
  try {
    const page = await s.api.messages(roomId, s.nextCursor);
    if (s.selected !== roomId) return;
    s.nextCursor = page.nextCursor;
    const list = document.getElementById("messages")!;
    const before = list.scrollHeight;
    const older = page.items.filter((message) => !s.messages.has(message.id)).reverse();
    for (const message of older) s.messages.set(message.id, message);
    list.prepend(...older.map((message) => render(message, true)));
    // Keep the reader where they were.
    list.scrollTop += list.scrollHeight - before;
  } catch (error) {
    showError(error);
  } finally {
    s.loadingOlder = false;
  }
}

/** When an item last changed, as the server has it. */
function changedAt(item: ListItem): string {
  return isTombstone(item) ? item.deletedAt : item.updatedAt;
}

function renderRoom(): void {
  const main = document.getElementById("room");
  if (!main) return;
  const s = session!;
  const room = s.rooms.find((candidate) => candidate.id === s.selected);
  if (!room) {
    replaceChildren(main, h("p", { class: "empty" }, "Pick a room, or create one."));
    return;
  }
  const list = h("div", {
    id: "messages",
    class: "messages",
    role: "log",
    "aria-label": "Messages",
    "aria-live": "polite",
    tabindex: 0,
  });
  list.addEventListener("scroll", () => {
    if (list.scrollTop < 60) void loadOlder();
  });
  replaceChildren(
    main,
    h(
      "div",
      { class: "room-head" },
      h(
        "button",
        {
          type: "button",
          class: "secondary back",
          onclick: () => document.getElementById("layout")?.classList.remove("room-open"),
        },
        "All rooms",
      ),
      h("h1", null, roomName(room)),
      room.kind === "room" && room.visibility === "private"
        ? h("span", { class: "tag", title: "Only its members see this room" }, "Private")
        : null,
      h("div", { class: "present" }, "Here now: ", h("span", { id: "present" })),
      room.kind === "room"
        ? h(
            "button",
            {
              type: "button",
              id: "add-people-button",
              class: "secondary",
              onclick: () => showAddPeople(room),
            },
            "Add people",
          )
        : null,
      muteButton(room.id),
    ),
    list,
    composer({
      id: "composer",
      previewId: "preview",
      label: "Message",
      placeholder:
        "Write a message (markdown: **bold**, _italic_, `code`, [links](https://…), @name)",
      submitLabel: "Send",
      me: s.username,
      candidates: () => mentionCandidates(),
      send: async (content, fileIds) => {
        try {
          posted(await s.api.post(room.id, content, undefined, fileIds));
        } catch (error) {
          showError(error);
          throw error;
        }
      },
      attachments: attachments(s.api, room.id, "composer", showError),
      typing: () => sendTyping(room.id),
    }),
    h("p", { id: "typing", class: "typing", "aria-live": "polite" }),
    h("p", { id: "live-status", class: "visually-hidden", role: "status" }),
    callPanel(room.id),
  );
  renderPresence();
}

/** Tells the room the user is typing: at most once per 2 s (the server drops more). */
let typingSent = { roomId: 0, at: 0 };
function sendTyping(roomId: number): void {
  const now = Date.now();
  if (typingSent.roomId === roomId && now - typingSent.at < 2_000) return;
  typingSent = { roomId, at: now };
  session?.stream.typing(roomId);
}

/** Who is typing, by room: each name until 4 s after their last typing frame, or their message. */
const typists = new Map<number, Map<string, ReturnType<typeof setTimeout>>>();
function onTyping(roomId: number, username: string): void {
  let room = typists.get(roomId);
  if (!room) typists.set(roomId, (room = new Map()));
  clearTimeout(room.get(username));
  room.set(
    username,
    setTimeout(() => stoppedTyping(roomId, username), 4_000),
  );
  renderTyping();
}

function stoppedTyping(roomId: number, username: string): void {
  const room = typists.get(roomId);
  if (!room?.has(username)) return;
  clearTimeout(room.get(username));
  room.delete(username);
  renderTyping();
}

function renderTyping(): void {
  const target = document.getElementById("typing");
  if (!target || session?.selected === undefined) return;
  const names = [...(typists.get(session.selected)?.keys() ?? [])];
  target.textContent =
    names.length === 0
      ? ""
      : names.length === 1
        ? `${names[0]} is typing…`
        : `${names.slice(0, -1).join(", ")} and ${names.at(-1)} are typing…`;
}

/** Mute or unmute the room on this browser (see muted-rooms.ts). */
function muteButton(roomId: number): HTMLElement {
  const s = session!;
  const button = h(
    "button",
    {
      type: "button",
      id: "mute",
      class: "secondary",
      "aria-pressed": String(s.muted.has(roomId)),
      title: "A muted room raises no notification",
    },
    "Mute",
  );
  button.addEventListener("click", () => {
    button.setAttribute("aria-pressed", String(s.muted.toggle(roomId)));
    renderRooms();
  });
  return button;
}

function renderPresence(): void {
  const target = document.getElementById("present");
  if (!target || session?.selected === undefined) return;
  const present = session.stream.present(session.selected);
  replaceChildren(
    target,
    present.map((name) => h("span", { class: "person" }, name)),
  );
}

function callPanel(roomId: number): HTMLElement {
  const s = session!;
  const status = h("p", { id: "call-status", class: "call-status" }, "No call.");
  const log = h("ul", { id: "call-log", class: "call-log" });
  const input = h("input", {
    id: "call-input",
    placeholder: "Say something peer to peer",
    "aria-label": "Call message",
  });
  const join = h("button", { type: "button", id: "join-call" }, "Start or join call");
  const leave = h("button", { type: "button", id: "leave-call", hidden: true }, "Leave call");
  const peerForm = h(
    "form",
    {
      class: "row",
      hidden: true,
      onsubmit: (event) => {
        event.preventDefault();
        const said = input.value;
        if (!said || !s.call) return;
        const reached = s.call.say(said);
        log.append(h("li", null, `me → ${reached} peer(s): ${said}`));
        input.value = "";
      },
    },
    input,
    h("button", { type: "submit" }, "Send over call"),
  );
  join.addEventListener("click", () => {
    void (async () => {
      try {
        const { iceServers } = await s.api.callState(roomId);
        const joined = await s.api.joinCall(roomId);
        s.call?.close();
        s.call = new Call(roomId, s.stream, iceServers, {
          onStatus: (username, state) => {
            status.textContent = `${username}: ${state}`;
            if (state === "channel open") status.classList.add("connected");
          },
          onMessage: (from, said) => log.append(h("li", null, `${from}: ${said}`)),
        });
        status.textContent = `In the call (${joined.participants.join(", ")}).`;
        join.hidden = true;
        leave.hidden = false;
        peerForm.hidden = false;
        await s.call.connectTo(joined.participants.filter((name) => name !== s.username));
      } catch (error) {
        showError(error);
      }
    })();
  });
  leave.addEventListener("click", () => {
    s.call?.close();
    s.call = undefined;
    status.textContent = "No call.";
    status.classList.remove("connected");
    join.hidden = false;
    leave.hidden = true;
    peerForm.hidden = true;
    void s.api.leaveCall(roomId).catch(showError);
  });
  return h(
    "section",
    { class: "call" },
    h("h2", null, "Call"),
    h("div", { class: "row" }, join, leave),
    status,
    peerForm,
    log,
  );
}

/** Ends the session on the server (every process), or forgets the pasted token. */
async function signOut(): Promise<void> {
  const s = session!;
  forgetToken();
  if (s.auth.kind === "session") await s.api.logout().catch(() => undefined);
  signIn("Signed out.");
}

/** The last failure's words go once something works again (a send after a DLP refusal). */
function clearError(): void {
  document.getElementById("flash")?.remove();
}

function showError(error: unknown): void {
  if (isUnauthorized(error)) {
    forgetToken();
    signIn("The session ended: sign in again.");
    return;
  }
  const existing = document.getElementById("flash");
  const flash = existing ?? h("p", { id: "flash", class: "flash error", role: "alert" });
  flash.textContent = describeError(error);
  if (!existing) document.getElementById("room")?.prepend(flash);
}

/** A pasted token kept for this tab, else the session the browser holds, else the sign-in screen. */
async function boot(): Promise<void> {
  if (inviteToken() !== undefined || resetToken() !== undefined) return signIn();
  const token = storedToken();
  if (token !== null) {
    try {
      return await start({ kind: "token", token });
    } catch (error) {
      forgetToken();
      return signIn(
        isUnauthorized(error) ? "That token is no longer accepted." : describeError(error),
      );
    }
  }
  let csrfToken: string;
  try {
    csrfToken = (await signInApi.csrf()).csrfToken;
  } catch {
    return signIn();
  }
  try {
    await start({ kind: "session", csrfToken });
  } catch (error) {
    signIn(describeError(error));
  }
}

// An invitation link opened in a tab already on the page (only the fragment changes).
window.addEventListener("hashchange", () => {
  if ((inviteToken() !== undefined || resetToken() !== undefined) && session === undefined)
    signIn();
});

void boot();
