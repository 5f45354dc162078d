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
  type Api,
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
import { messageItem, type MessageActions } from "./message-item.js";
import { mutedRooms, type MutedRooms } from "./muted-rooms.js";
import { notificationButton, notify } from "./notify.js";
import { threadPanel, type ThreadPanel } from "./thread-panel.js";

const app = document.getElementById("app")!;

interface Session {
  api: Api;
  stream: StreamClient;
  username: string;
  rooms: Room[];
  unread: Map<number, number>;
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
  const input = h("input", {
    id: "token",
    type: "password",
    autocomplete: "off",
    placeholder: "eyJhbGciOi...",
    "aria-label": "Token",
  });
  const error = h("p", { class: "error", role: "alert" }, notice ?? "");
  const form = h(
    "form",
    {
      class: "sign-in",
      onsubmit: (event) => {
        event.preventDefault();
        if (!input.value.trim()) return;
        storeToken(input.value);
        void start(storedToken()!).catch((failure: unknown) => {
          forgetToken();
          signIn(isUnauthorized(failure) ? "That token was not accepted." : describeError(failure));
        });
      },
    },
    h("h1", null, "Parley"),
    h("label", { for: "token" }, "Token"),
    input,
    h("button", { type: "submit" }, "Sign in"),
    error,
  );
  replaceChildren(app, form);
  document.title = "Sign in · Parley";
  input.focus();
}

async function start(token: string): Promise<void> {
  const api = createApi(token);
  const rooms = (await api.rooms()).items;
  const stream = createStreamClient({ baseUrl: location.origin, token });
  const ready = new Promise<string>((resolve, reject) => {
    stream.on("ready", (user) => resolve(user.username));
    stream.on("error", (error) => {
      if (error.code === "unauthorized") reject(new Error("That token was not accepted."));
    });
  });
  const username = await ready;
  session = {
    api,
    stream,
    username,
    rooms,
    unread: new Map(),
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
  if (roomId !== s.selected) {
    s.unread.set(roomId, (s.unread.get(roomId) ?? 0) + 1);
    renderRooms();
    return;
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
      roomName: isDm ? undefined : (room?.name ?? undefined),
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
      h("span", { class: "who", id: "me" }, s.username),
      notificationButton(),
      h(
        "button",
        {
          class: "link",
          type: "button",
          onclick: () => {
            forgetToken();
            signIn();
          },
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
      h("nav", { class: "rooms" }, h("h2", null, "Rooms"), h("ul", { id: "rooms" }), newRoomForm()),
      h("main", { id: "room", class: "room" }),
    ),
  );
  renderRooms();
  renderRoom();
}

function newRoomForm(): HTMLFormElement {
  const input = h("input", { id: "new-room", placeholder: "New room", "aria-label": "New room" });
  return h(
    "form",
    {
      class: "new-room",
      onsubmit: (event) => {
        event.preventDefault();
        const name = input.value.trim();
        if (!name) return;
        void session!.api.createRoom(name).then((room) => {
          session!.rooms.push(room);
          session!.stream.subscribe(room.id);
          input.value = "";
          void selectRoom(room.id);
        }, showError);
      },
    },
    input,
  );
}

function renderRooms(): void {
  const list = document.getElementById("rooms");
  if (!list) return;
  const s = session!;
  replaceChildren(
    list,
    s.rooms.map((room) => {
      const unread = s.unread.get(room.id) ?? 0;
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
          h("span", { class: "name" }, room.name ?? "Direct message"),
          muted ? h("span", { class: "muted-mark", title: "Muted" }, "muted") : null,
          unread > 0
            ? h(
                "span",
                { class: muted ? "unread muted" : "unread", title: `${unread} unread` },
                unread,
              )
            : null,
        ),
      );
    }),
  );
}

/** Shows a room; `reveal`: in place of the room list on a narrow screen (see styles.css). */
async function selectRoom(roomId: number, reveal = true): Promise<void> {
  const s = session!;
  s.selected = roomId;
  s.unread.delete(roomId);
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
      h("h1", null, room.name ?? "Direct message"),
      h("div", { class: "present" }, "Here now: ", h("span", { id: "present" })),
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
      send: async (content) => {
        try {
          posted(await s.api.post(room.id, content));
        } catch (error) {
          showError(error);
          throw error;
        }
      },
    }),
    h("p", { id: "live-status", class: "visually-hidden", role: "status" }),
    callPanel(room.id),
  );
  renderPresence();
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

const token = storedToken();
if (token === null) signIn();
else
  void start(token).catch((error: unknown) => {
    forgetToken();
    signIn(describeError(error));
  });
