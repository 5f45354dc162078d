import { DEFAULT_VENDOR } from "./media-type.js";
import type { EndpointDefaults } from "./types.js";
import { VERSION } from "./version.js";

export const DEFAULTS: EndpointDefaults = {
  method: "get",
  baseUrl: "http://localhost:8080",
  headers: {
    accept: `application/vnd.${DEFAULT_VENDOR}.v3+json`,
    "user-agent": `parley-endpoint/${VERSION}`,
  },
  mediaType: { format: "", previews: [] },
};
