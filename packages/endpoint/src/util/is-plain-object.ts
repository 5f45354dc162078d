/** True for `{}`-like objects (prototype `Object.prototype` or `null`), false for arrays, class instances, Buffers, Dates. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
