/**
 * The body of `response` as Parley callers expect it: parsed JSON for `application/json`,
 * `application/problem+json` and other `+json` types; `undefined` for an empty answer (204);
 * a string for `text/*` (such as `/metrics` or a plain `ok`); an ArrayBuffer for anything else.
 * JSON that does not parse is returned as the text it is.
 */
export async function getResponseData(response: Response): Promise<unknown> {
  if (response.status === 204 || response.status === 205 || response.status === 304) {
    await response.body?.cancel();
    return undefined;
  }
  const contentType = response.headers.get("content-type") ?? "";
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase();
  if (isJson(mediaType)) {
    const text = await response.text();
    if (text === "") return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  if (mediaType === "" || mediaType.startsWith("text/")) {
    const text = await response.text();
    return text === "" && mediaType === "" ? undefined : text;
  }
  return response.arrayBuffer();
}

function isJson(mediaType: string): boolean {
  return mediaType === "application/json" || mediaType.endsWith("+json");
}
