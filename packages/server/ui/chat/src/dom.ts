/**
 * The chat page's markup helpers are the shared ones (../../shared/dom.ts). The one exception to
 * "text is never parsed" is rendered markdown (markdown.ts), produced with raw HTML disabled.
 */
export { append, h, replaceChildren, type Attributes, type Child } from "../../shared/dom.js";
