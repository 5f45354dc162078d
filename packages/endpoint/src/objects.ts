// Own-property helpers for the plain objects that options, defaults and url variables are.

/** True for `{}`-like objects (prototype `Object.prototype` or `null`), false for arrays, class instances, Buffers, Dates. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** An own property's value; inherited properties (`constructor`, `toString`) read as undefined. */
export function ownValue(object: object, key: string): unknown {
  return Object.hasOwn(object, key) ? (object as Record<string, unknown>)[key] : undefined;
}

/**
 * `target[key] = value`, except that a key named `__proto__` becomes an own property instead of
 * replacing the object's prototype.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
}
