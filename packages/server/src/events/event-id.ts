import { randomFillSync } from "node:crypto";

/** Crockford's base32 alphabet (no I, L, O, U), as ULIDs use: ids sort by time as text. */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let lastTime = -1;
let lastRandom = 0;

/**
 * The first 16 of an event id's 26 characters, new for every emitted event: 10 characters of
 * time (milliseconds, as a ULID's) and 6 of randomness (30 bits), incremented within one
 * millisecond so that one process never hands out the same prefix twice.
 */
export function newEventIdPrefix(now: number): string {
  if (now === lastTime) {
    lastRandom = (lastRandom + 1) % 2 ** 30;
  } else {
    lastTime = now;
    lastRandom = random30();
  }
  return encode(now, 10) + encode(lastRandom, 6);
}

/**
 * 30 random bits, read from a pool filled 1,024 at a time: a randomBytes(4) call per event cost
 * about 5 µs of a post's CPU time (a synchronous call into the system's generator each time).
 */
const pool = new Uint32Array(1024);
let poolNext = pool.length;
function random30(): number {
  if (poolNext === pool.length) {
    randomFillSync(pool);
    poolNext = 0;
  }
  return pool[poolNext++]! >>> 2;
}

/**
 * An event id: `evt_` + the event's prefix + the endpoint id as 10 zero-padded digits, so the id
 * is unique per (event, endpoint) by construction and the fan-out statement can append the
 * endpoint's part in SQL for every row it inserts.
 */
export function eventIdFor(prefix: string, webhookId: number): string {
  return `evt_${prefix}${String(webhookId).padStart(10, "0")}`;
}

export const EVENT_ID_PATTERN = /^evt_[0-9A-Z]{26}$/;

function encode(value: number, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) {
    out = ALPHABET[value % 32]! + out;
    value = Math.floor(value / 32);
  }
  return out;
}
