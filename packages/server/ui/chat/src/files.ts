/**
 * Files in the conversation: the composer's "Attach" button (each file uploaded to the room at
 * once, listed until the message is sent with their ids) and the files of a message (PNG, JPEG,
 * GIF and WebP images as previews, anything else as a download link).
 */
import type { Api, MessageFile } from "./api.js";
import { h, replaceChildren } from "./dom.js";

/** The types the server serves inline (docs/chat-api.md, "Download"). */
const PREVIEWED = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export function fileUrl(roomId: number, fileId: number): string {
  return `/api/rooms/${roomId}/files/${fileId}`;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * With the session cookie the browser loads a file by its address; with a pasted token the page
 * fetches it and shows it as a data: URL (the page's CSP allows images from itself and data:).
 */
async function source(api: Api, roomId: number, fileId: number): Promise<string> {
  if (api.cookie) return fileUrl(roomId, fileId);
  const blob = await api.file(roomId, fileId);
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as string);
    reader.onerror = () => reject(reader.error ?? new Error("could not read the file"));
    reader.readAsDataURL(blob);
  });
}

export function messageFiles(api: Api, roomId: number, files: MessageFile[]): HTMLElement | null {
  if (files.length === 0) return null;
  return h(
    "ul",
    { class: "files" },
    files.map((file) => {
      if (PREVIEWED.has(file.mediaType)) {
        const image = h("img", { class: "file-preview", alt: file.name, "data-file-id": file.id });
        void source(api, roomId, file.id).then(
          (src) => (image.src = src),
          () => image.replaceWith(h("span", { class: "hint" }, `${file.name} (not available)`)),
        );
        return h("li", null, image);
      }
      const link = h(
        "a",
        { href: fileUrl(roomId, file.id), download: file.name, "data-file-id": file.id },
        file.name,
      );
      if (!api.cookie) {
        link.addEventListener("click", (event) => {
          event.preventDefault();
          void api.file(roomId, file.id).then((blob) => {
            const url = URL.createObjectURL(blob);
            const save = h("a", { href: url, download: file.name });
            save.click();
            setTimeout(() => URL.revokeObjectURL(url), 10_000);
          });
        });
      }
      return h("li", null, link, h("span", { class: "hint" }, ` ${size(file.size)}`));
    }),
  );
}

export interface Attachments {
  /** The "Attach" button and the list of files waiting to be sent. */
  element: HTMLElement;
  /** Ids of the uploaded files to send with the next message. */
  ids(): number[];
  names(): string[];
  /** Whether an upload is still running. */
  busy(): boolean;
  clear(): void;
}

export function attachments(
  api: Api,
  roomId: number,
  id: string,
  fail: (error: unknown) => void,
): Attachments {
  const waiting: { id: number; name: string }[] = [];
  let uploading = 0;
  const input = h("input", {
    id: `${id}-files`,
    type: "file",
    multiple: true,
    class: "visually-hidden",
  });
  const list = h("ul", { class: "attachments", "aria-live": "polite" });
  const render = () =>
    replaceChildren(
      list,
      waiting.map((file) =>
        h(
          "li",
          { "data-file-id": file.id },
          file.name,
          h(
            "button",
            {
              type: "button",
              class: "link-button",
              "aria-label": `Remove ${file.name}`,
              onclick: () => {
                waiting.splice(waiting.indexOf(file), 1);
                render();
              },
            },
            "×",
          ),
        ),
      ),
      uploading > 0 ? h("li", { class: "hint" }, "Uploading…") : null,
    );
  input.addEventListener("change", () => {
    const files = [...(input.files ?? [])];
    input.value = "";
    for (const file of files) {
      uploading++;
      render();
      api.upload(roomId, file).then(
        (uploaded) => {
          uploading--;
          waiting.push({ id: uploaded.id, name: file.name });
          render();
        },
        (error: unknown) => {
          uploading--;
          render();
          fail(error);
        },
      );
    }
  });
  return {
    element: h(
      "div",
      { class: "attach" },
      h("label", { for: input.id, class: "button secondary" }, "Attach"),
      input,
      list,
    ),
    ids: () => waiting.map((file) => file.id),
    names: () => waiting.map((file) => file.name),
    busy: () => uploading > 0,
    clear: () => {
      waiting.length = 0;
      render();
    },
  };
}
