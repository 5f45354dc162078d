import { ParleyError } from "./parley-error.js";

/**
 * A webhook body that is not a Parley envelope: not JSON, a missing or mistyped field, an unknown
 * event name. `path` names the offending field (`data.roomId`), when there is one.
 */
export class WebhookPayloadError extends ParleyError {
  override name = "WebhookPayloadError";
  readonly path: string | undefined;

  constructor(message: string, path?: string, options?: ErrorOptions) {
    super(message, options);
    this.path = path;
  }
}
