/**
 * Browser notifications (the Notification API) for what is meant for the user: a message in a DM,
 * or one that mentions them, while the page is hidden, from someone else, in a room not muted.
 * Permission is asked for only from a click ("Turn on notifications" in the header), as browsers
 * require.
 */
import { h } from "./dom.js";

export interface Notice {
  roomId: number;
  messageId: number;
  /** The sender's display name. */
  from: string;
  /** The room's name; undefined for a DM. */
  roomName: string | undefined;
  content: string;
}

export function notificationsSupported(): boolean {
  return typeof Notification !== "undefined";
}

/** Shows the notice when the page is hidden and permission was given; clicking it opens the room. */
export function notify(notice: Notice, open: (roomId: number) => void): void {
  if (!notificationsSupported() || Notification.permission !== "granted") return;
  if (document.visibilityState !== "hidden") return;
  const title =
    notice.roomName === undefined ? notice.from : `${notice.from} in ${notice.roomName}`;
  const body = notice.content.length > 140 ? `${notice.content.slice(0, 139)}…` : notice.content;
  const notification = new Notification(title, { body, tag: `parley-message-${notice.messageId}` });
  notification.onclick = () => {
    window.focus();
    open(notice.roomId);
    notification.close();
  };
}

/** The header's button that asks for permission; null once asked (granted or refused). */
export function notificationButton(): HTMLElement | null {
  if (!notificationsSupported() || Notification.permission !== "default") return null;
  const button = h(
    "button",
    { type: "button", class: "link", id: "enable-notifications" },
    "Turn on notifications",
  );
  button.addEventListener("click", () => {
    void Notification.requestPermission().then(() => button.remove());
  });
  return button;
}
