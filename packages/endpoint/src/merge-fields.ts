// The fields of the options, one at a time: headers laid over the defaults' by name and normalized
// for sending, `request` merged shallowly, `undefined` never overriding. merge-options.ts and
// build-request.ts put them together.
import { isPlainObject, setOwn } from "./objects.js";
import type { HeaderValue } from "./types.js";

/**
 * A fresh header object: `defaults` (names already lowercase) with `given` laid over it, names
 * lowercased so `Accept` replaces `accept`. Undefined values are skipped; null is kept.
 */
export function mergeHeaders(defaults: unknown, given: unknown): Record<string, unknown> {
  // Object.assign, not a spread: V8 adds properties slowly to a spread copy of a non-frozen object.
  const headers = Object.assign({}, defaults) as Record<string, unknown>;
  if (typeof given === "object" && given !== null) {
    for (const name of Object.keys(given)) {
      const value = (given as Record<string, unknown>)[name];
      if (value !== undefined) headers[name.toLowerCase()] = value;
    }
  }
  return headers;
}

/**
 * Headers to send: lowercase names, values as given, `undefined` and `null` left out. Returns
 * `headers` itself when it already is so (pass only a fresh object you own), else a fresh copy.
 */
export function normalizeHeaders(headers: Record<string, unknown>): Record<string, HeaderValue> {
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined || value === null || name.toLowerCase() !== name) {
      return copy(headers);
    }
  }
  return headers as Record<string, HeaderValue>;
}

function copy(headers: Record<string, unknown>): Record<string, HeaderValue> {
  const normalized: Record<string, HeaderValue> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value !== undefined && value !== null)
      normalized[name.toLowerCase()] = value as HeaderValue;
  }
  return normalized;
}

/** The call's `request` over the defaults': shallowly merged when both are plain objects, else the call's as it is. */
export function mergeRequest(defaults: unknown, given: unknown): unknown {
  if (given === undefined) return defaults;
  return isPlainObject(defaults) && isPlainObject(given)
    ? { ...defaults, ...withoutUndefined(given) }
    : given;
}

/** The object itself when no own value is `undefined` (the usual case); else a copy without those keys. */
export function withoutUndefined<T extends object>(object: T): T {
  for (const key in object) {
    if (object[key] === undefined) {
      const copy: Record<string, unknown> = {};
      for (const name of Object.keys(object)) {
        const value = (object as Record<string, unknown>)[name];
        if (value !== undefined) setOwn(copy, name, value);
      }
      return copy as T;
    }
  }
  return object;
}
