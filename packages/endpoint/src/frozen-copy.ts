// The frozen copies the defaults are stored as (with-defaults.ts).
import { isPlainObject } from "./objects.js";

const frozen = new WeakSet<object>();

/**
 * A deep copy of plain objects and arrays, frozen; anything else (functions, class instances,
 * Buffers, AbortSignals) is kept by reference. Defaults are stored this way so neither the caller
 * (changing the object it passed) nor a consumer (changing a result that shares a default value)
 * can alter them later. Copies made here are reused as they are; cycles are preserved.
 */
export function frozenCopy<T>(value: T, copies = new Map<object, object>()): T {
  if (typeof value !== "object" || value === null || frozen.has(value)) return value;
  const known = copies.get(value);
  if (known !== undefined) return known as T;
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    copies.set(value, copy);
    for (const item of value as unknown[]) copy.push(frozenCopy(item, copies));
    return seal(copy) as T;
  }
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  copies.set(value, copy);
  for (const key of Object.keys(value)) {
    Object.defineProperty(copy, key, {
      value: frozenCopy(value[key], copies),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return seal(copy) as T;
}

function seal(copy: object): object {
  frozen.add(copy);
  return Object.freeze(copy);
}
