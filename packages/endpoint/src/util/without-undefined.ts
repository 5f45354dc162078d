import { setOwn } from "./set-own.js";

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
