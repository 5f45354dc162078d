import { endpoint } from "@parley/endpoint";
import { VERSION } from "./version.js";
import { withDefaults } from "./with-defaults.js";

/** Parley's API, one call at a time: `endpoint` builds the request, fetch sends it. */
export const request = withDefaults(endpoint, {
  headers: { "user-agent": `parley-client/${VERSION} ${endpoint.DEFAULTS.headers["user-agent"]}` },
});
