import { DEFAULTS } from "./defaults.js";
import { withDefaults } from "./with-defaults.js";

export const endpoint = withDefaults(null, DEFAULTS);
export { VERSION } from "./version.js";
export type {
  EndpointDefaults,
  EndpointInterface,
  EndpointOptions,
  HeaderValue,
  Layered,
  MediaType,
  RequestHeaders,
  RequestHeaderValue,
  RequestOptions,
  RequestRequestOptions,
} from "./types.js";
