import { isPlainObject } from "./is-plain-object.js";
import { withoutUndefined } from "./without-undefined.js";

/** The call's `request` over the defaults': shallowly merged when both are plain objects, else the call's as it is. */
export function mergeRequest(defaults: unknown, given: unknown): unknown {
  if (given === undefined) return defaults;
  return isPlainObject(defaults) && isPlainObject(given)
    ? { ...defaults, ...withoutUndefined(given) }
    : given;
}
