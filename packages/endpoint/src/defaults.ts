import type { EndpointDefaults } from "./types.js";
import { VERSION } from "./version.js";

/** The vendor named in media types when the accept header in effect names none. */
export const DEFAULT_VENDOR = "parley";

export const DEFAULTS: EndpointDefaults = {
  method: "get",
  baseUrl: "http://localhost:8080",
  headers: {
    accept: `application/vnd.${DEFAULT_VENDOR}.v3+json`,
    "user-agent": `parley-endpoint/${VERSION}`,
  },
  mediaType: { format: "", previews: [] },
};
