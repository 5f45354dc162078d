import { hash, verify, type Algorithm } from "@node-rs/argon2";

// The package declares its algorithms as a `const enum`, which has no runtime object to import.
const ARGON2ID = 2 as Algorithm.Argon2id;

/**
 * argon2id parameters for new password hashes: 64 MiB, 4 passes, one lane. A verify costs about
 * 70 ms of one core on the 2-core test machine (`bench/login.bench.ts` measures it; the 50-150 ms
 * target and the figures are in docs/performance.md). Hashes carry their own parameters (PHC
 * string), so raising these later re-costs only new and changed passwords.
 */
export const ARGON2_PARAMS = {
  algorithm: ARGON2ID,
  memoryCost: 65_536,
  timeCost: 4,
  parallelism: 1,
} as const;

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 1024;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_PARAMS);
}

let dummyHash: Promise<string> | undefined;

/**
 * Checks a password against a stored hash. Without one (an unknown username, an account without a
 * password), it verifies against a dummy hash of the same parameters and answers false: every
 * failure costs one verify, so the answer's timing does not tell which usernames exist.
 */
export async function verifyPassword(
  storedHash: string | null | undefined,
  password: string,
): Promise<boolean> {
  if (!storedHash) {
    dummyHash ??= hashPassword("parley dummy password, never anyone's");
    await verify(await dummyHash, password).catch(() => false);
    verifications.dummy++;
    return false;
  }
  verifications.real++;
  return verify(storedHash, password).catch(() => false);
}

/**
 * How many verifies ran, real and against the dummy hash: the enumeration test checks that an
 * unknown username costs a verify as a wrong password does.
 */
export const verifications = { real: 0, dummy: 0 };
