/**
 * A gate the test opens: hold a receiver's answer (or any step) until the test has seen what it
 * wants to see, instead of delaying it by a guessed number of milliseconds.
 *
 *   const hold = latch();
 *   receiver.respondWith(async () => { await hold.opened; return { status: 204 }; });
 *   ... assert while the request is held ...
 *   hold.release();
 */
export interface Latch {
  readonly opened: Promise<void>;
  release(): void;
}

export function latch(): Latch {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => (release = resolve));
  return { opened, release };
}
