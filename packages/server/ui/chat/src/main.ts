/**
 * Parley's chat page at /app/: sign in with a token, pick a room, read its history (older
 * messages load as you scroll up), write with a markdown preview, see who is present and which
 * rooms have unread messages, and start or join a peer-to-peer call. Live updates come from the
 * stream (createStreamClient from @parley/client), which reconnects and resumes by itself; a
 * banner shows while it does.
 */
import {
  createApi,
  createStreamClient,
  describeError,
  forgetToken,
  isUnauthorized,
  storedToken,
  storeToken,
  type Api,
  type Message,
  type Room,
  type StreamClient,
  type StreamMessage,
} from "./api.js";
import { Call } from "./call.js";
import { h, replaceChildren } from "./dom.js";
import { renderContent } from "./markdown.js";

const app = document.getElementById("app")!;

interface Session {
  api: Api;
  stream: StreamClient;
  username: string;
  rooms: Room[];
  unread: Map<number, number>;
  selected: number | undefined;
  /** Messages of the selected room by id (live frames and pages may overlap). */
  messages: Map<number, Message>;
  nextCursor: string | null;
  loadingOlder: boolean;
  call: Call | undefined;
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
    nextCursor: null,
    loadingOlder: false,
    call: undefined,
  };
  stream.on("state", (state) => showBanner(state));
  stream.on("event", (frame) => {
    if (frame.event === "MESSAGE_CREATED") onMessage(frame.roomId, frame.data.message);
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
  if (rooms[0]) await selectRoom(rooms[0].id);
}

function onMessage(roomId: number, message: StreamMessage): void {
  const s = session!;
  if (roomId !== s.selected) {
    s.unread.set(roomId, (s.unread.get(roomId) ?? 0) + 1);
    renderRooms();
    return;
  }
  const list = document.getElementById("messages");
  if (!list || s.messages.has(message.id)) return;
  const stuck = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  s.messages.set(message.id, message);
  list.append(messageItem(message));
  if (stuck || message.sender.username === s.username) list.scrollTop = list.scrollHeight;
}

function showBanner(state: string): void {
  const banner = document.getElementById("banner");
  if (!banner) return;
  banner.hidden = state !== "reconnecting";
}

function renderShell(): void {
  const s = session!;
  replaceChildren(
    app,
    h(
      "header",
      { class: "top" },
      h("span", { class: "brand" }, "Parley"),
      h("span", { class: "who", id: "me" }, s.username),
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
      { class: "layout" },
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
          unread > 0 ? h("span", { class: "unread", title: `${unread} unread` }, unread) : null,
        ),
      );
    }),
  );
}

async function selectRoom(roomId: number): Promise<void> {
  const s = session!;
  s.selected = roomId;
  s.unread.delete(roomId);
  s.messages = new Map();
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
    list.prepend(...fresh.map(messageItem));
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
    list.prepend(...older.map(messageItem));
    // Keep the reader where they were.
    list.scrollTop += list.scrollHeight - before;
  } catch (error) {
    showError(error);
  } finally {
    s.loadingOlder = false;
  }
}

function messageItem(message: Message): HTMLElement {
  const time = new Date(message.createdAt);
  return h(
    "article",
    { class: "message", "data-message-id": message.id },
    h(
      "header",
      null,
      h("strong", null, message.sender.displayName),
      h("time", { datetime: message.createdAt }, time.toLocaleTimeString()),
    ),
    renderContent(message.content, message.contentFormat),
  );
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
  const list = h("div", { id: "messages", class: "messages", "aria-live": "polite" });
  list.addEventListener("scroll", () => {
    if (list.scrollTop < 60) void loadOlder();
  });
  replaceChildren(
    main,
    h(
      "div",
      { class: "room-head" },
      h("h1", null, room.name ?? "Direct message"),
      h("div", { class: "present" }, "Here now: ", h("span", { id: "present" })),
    ),
    list,
    composer(room.id),
    callPanel(room.id),
  );
  renderPresence();
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

function composer(roomId: number): HTMLElement {
  const text = h("textarea", {
    id: "composer",
    rows: 3,
    placeholder: "Write a message (markdown: **bold**, _italic_, `code`, [links](https://…))",
    "aria-label": "Message",
  });
  const preview = h("div", { id: "preview", class: "preview", hidden: true });
  const send = async () => {
    const content = text.value;
    if (!content.trim()) return;
    text.value = "";
    preview.hidden = true;
    try {
      await session!.api.post(roomId, content);
    } catch (error) {
      text.value = content;
      showError(error);
    }
  };
  text.addEventListener("input", () => {
    preview.hidden = text.value.trim() === "";
    replaceChildren(
      preview,
      h("span", { class: "label" }, "Preview"),
      renderContent(text.value, "markdown"),
    );
  });
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      void send();
    }
  });
  return h(
    "form",
    {
      class: "composer",
      onsubmit: (event) => {
        event.preventDefault();
        void send();
      },
    },
    preview,
    h("div", { class: "row" }, text, h("button", { type: "submit" }, "Send")),
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
