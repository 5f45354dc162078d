/** An own property's value; inherited properties (`constructor`, `toString`) read as undefined. */
export function ownValue(object: object, key: string): unknown {
  return Object.hasOwn(object, key) ? (object as Record<string, unknown>)[key] : undefined;
}
