import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ConfigError } from "./config-error.js";
import type { Config } from "./load-config.js";
import { openSecret, sealSecret } from "./secret-box.js";
import { isEmbedded } from "../db/dialect.js";
import type { DatabaseConnection } from "../db/open-database.js";
import {
  deleteServerKey,
  insertServerKey,
  listServerKeys,
  replaceServerKey,
} from "./server-keys-repository.js";

/** One HS256 key of the tokens this server issues, named by the `kid` its tokens carry. */
export interface JwtKey {
  kid: string;
  secret: Uint8Array;
}

export interface ServerKeys {
  /** HS256 key of the tokens this server issues now. */
  jwtSecret: Uint8Array;
  /** Every HS256 key a token may be signed with, the current one first. */
  jwtKeys: JwtKey[];
  /** AES-256-GCM key that encrypts webhook secrets at rest. */
  secretKey: Buffer;
}

const JWT_KEY = "jwt-secret";
const SECRET_KEY = "secret-key";
/** A stored key sealed (AES-256-GCM) by the master key; anything else is the key in hex. */
const WRAPPED = "wrapped:v1:";
/** The `kid` of tokens signed with PARLEY_JWT_SECRET. */
export const CONFIGURED_KID = "config";
/**
 * How long a key replaced by `parley keys rotate` is still accepted: the longest lifetime a token
 * can be issued with, so every token signed with it keeps working until it expires.
 */
export const MAX_TOKEN_TTL_SECONDS = 366 * 24 * 3600;

/**
 * Where generated keys live. On the embedded SQLite install: files in the data dir beside the
 * database (mode 0600). With PostgreSQL, processes on different hosts share no data dir, so they
 * are rows of `server_keys`, and every process reads the same ones.
 */
interface KeyStore {
  list(): Promise<{ name: string; value: string }[]>;
  /** Writes the key unless one of that name exists (another process may have won the race). */
  insert(name: string, value: string): Promise<void>;
  /** Replaces `previous` with `value`, only if the stored value is still `previous`. */
  replace(name: string, previous: string, value: string): Promise<void>;
  remove(name: string): Promise<void>;
}

function fileStore(dir: string): KeyStore {
  const isKey = (name: string) =>
    name === SECRET_KEY || name === JWT_KEY || /^jwt-secret-\d+$/.test(name);
  return {
    async list() {
      if (!fs.existsSync(dir)) return [];
      return fs
        .readdirSync(dir)
        .filter(isKey)
        .map((name) => ({ name, value: fs.readFileSync(path.join(dir, name), "utf8").trim() }));
    },
    async insert(name, value) {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      try {
        // "wx": never overwrite a key another process wrote first.
        fs.writeFileSync(path.join(dir, name), value + "\n", { flag: "wx", mode: 0o600 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    },
    async replace(name, previous, value) {
      const file = path.join(dir, name);
      if (fs.readFileSync(file, "utf8").trim() !== previous) return;
      const temp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temp, value + "\n", { mode: 0o600 });
      fs.renameSync(temp, file);
    },
    async remove(name) {
      fs.rmSync(path.join(dir, name), { force: true });
    },
  };
}

function databaseStore(database: DatabaseConnection): KeyStore {
  const db = database.db;
  return {
    list: () => listServerKeys(db),
    insert: (name, value) => insertServerKey(db, name, value, Date.now()),
    replace: (name, previous, value) => replaceServerKey(db, name, previous, value),
    remove: (name) => deleteServerKey(db, name),
  };
}

/**
 * The master key, from PARLEY_MASTER_KEY or the file PARLEY_MASTER_KEY_FILE names: 32 bytes as 64
 * hex digits or as base64. Undefined when neither is set.
 */
export function readMasterKey(config: Config): Buffer | undefined {
  let text = config.masterKey;
  let variable = "PARLEY_MASTER_KEY";
  if (text === undefined && config.masterKeyFile !== undefined) {
    variable = "PARLEY_MASTER_KEY_FILE";
    try {
      text = fs.readFileSync(config.masterKeyFile, "utf8");
    } catch (error) {
      throw new ConfigError(
        variable,
        `cannot read ${config.masterKeyFile}: ${(error as Error).message}`,
      );
    }
  }
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, "hex")
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed, "base64")
      : undefined;
  if (key?.length !== 32) {
    throw new ConfigError(variable, "the master key must be 32 bytes: 64 hex digits or base64");
  }
  return key;
}

/** Seals a key for storage with the master key, or leaves it as it is without one. */
function wrap(master: Buffer | undefined, key: string): string {
  return master ? WRAPPED + sealSecret(master, key) : key;
}

function unwrap(master: Buffer | undefined, name: string, stored: string): string {
  if (!stored.startsWith(WRAPPED)) return stored;
  if (!master) {
    throw new ConfigError(
      "PARLEY_MASTER_KEY",
      `the stored key "${name}" is wrapped by a master key: set PARLEY_MASTER_KEY or PARLEY_MASTER_KEY_FILE`,
    );
  }
  try {
    return openSecret(master, stored.slice(WRAPPED.length));
  } catch {
    throw new ConfigError(
      "PARLEY_MASTER_KEY",
      `the master key does not open the stored key "${name}" (is it the master key this installation was set up with?)`,
    );
  }
}

function isJwtKeyName(name: string): boolean {
  return name === JWT_KEY || /^jwt-secret-\d+$/.test(name);
}

/** Generated JWT keys in order of creation: `jwt-secret`, then `jwt-secret-<epoch ms>` per rotation. */
function createdAt(name: string): number {
  return name === JWT_KEY ? 0 : Number(name.slice(JWT_KEY.length + 1));
}

/**
 * The key store this configuration uses, after checking that it may: with PostgreSQL, generated
 * keys sit beside the ciphertexts they protect, so they must be wrapped by a master key kept
 * outside the database, unless the operator says explicitly that plain keys in the database are
 * acceptable (PARLEY_INSECURE_KEYS_IN_DATABASE).
 */
function openStore(
  config: Config,
  database: DatabaseConnection,
): { store: KeyStore; master: Buffer | undefined } {
  const master = readMasterKey(config);
  if (isEmbedded(database.dialect)) return { store: fileStore(config.dataDir), master };
  if (!master && !config.insecureKeysInDatabase) {
    throw new ConfigError(
      "PARLEY_MASTER_KEY",
      "with PostgreSQL, generated keys are kept in the database and must be wrapped by a master key kept outside it: " +
        "set PARLEY_MASTER_KEY or PARLEY_MASTER_KEY_FILE (32 random bytes, e.g. `openssl rand -hex 32`), " +
        "or set PARLEY_JWT_SECRET and PARLEY_SECRET_KEY, " +
        "or accept plain keys in the database with PARLEY_INSECURE_KEYS_IN_DATABASE=true",
    );
  }
  return { store: databaseStore(database), master };
}

/**
 * Reads (creating when missing) one generated key. A plain key found while a master key is set
 * is wrapped in place, so an installation moves to wrapped keys by starting once with the master
 * key.
 */
async function generatedKey(
  store: KeyStore,
  master: Buffer | undefined,
  name: string,
): Promise<string> {
  let stored = (await store.list()).find((key) => key.name === name)?.value;
  if (stored === undefined) {
    await store.insert(name, wrap(master, crypto.randomBytes(32).toString("hex")));
    stored = (await store.list()).find((key) => key.name === name)!.value;
  }
  const key = unwrap(master, name, stored);
  if (master && !stored.startsWith(WRAPPED)) await store.replace(name, stored, wrap(master, key));
  return key;
}

async function generatedJwtKeys(store: KeyStore, master: Buffer | undefined): Promise<JwtKey[]> {
  await generatedKey(store, master, JWT_KEY);
  const keys: JwtKey[] = [];
  const stored = (await store.list())
    .filter((key) => isJwtKeyName(key.name))
    .sort((a, b) => createdAt(b.name) - createdAt(a.name));
  for (const { name, value } of stored) {
    const key = unwrap(master, name, value);
    if (master && !value.startsWith(WRAPPED)) await store.replace(name, value, wrap(master, key));
    keys.push({ kid: name, secret: new TextEncoder().encode(key) });
  }
  return keys;
}

/**
 * The server's keys: from configuration when set; otherwise generated once and kept in the key
 * store (data dir files with SQLite, `server_keys` rows with PostgreSQL), wrapped by the master
 * key when one is set.
 */
export async function loadServerKeys(
  config: Config,
  database: DatabaseConnection,
): Promise<ServerKeys> {
  if (config.jwtSecret !== undefined && config.secretKey !== undefined) {
    const secret = new TextEncoder().encode(config.jwtSecret);
    return {
      jwtSecret: secret,
      jwtKeys: [{ kid: CONFIGURED_KID, secret }],
      secretKey: Buffer.from(config.secretKey, "hex"),
    };
  }
  const { store, master } = openStore(config, database);
  const jwtKeys =
    config.jwtSecret !== undefined
      ? [{ kid: CONFIGURED_KID, secret: new TextEncoder().encode(config.jwtSecret) }]
      : await generatedJwtKeys(store, master);
  const secret = config.secretKey ?? (await generatedKey(store, master, SECRET_KEY));
  return { jwtSecret: jwtKeys[0]!.secret, jwtKeys, secretKey: Buffer.from(secret, "hex") };
}

/**
 * `parley keys rotate`: adds a new JWT key, which signs every token issued from now on; the
 * previous keys are still accepted for MAX_TOKEN_TTL_SECONDS after they were replaced, so tokens
 * they signed keep working until they expire, and are deleted after that.
 */
export async function rotateJwtKey(
  config: Config,
  database: DatabaseConnection,
  now = Date.now(),
): Promise<{ kid: string; retired: string[] }> {
  if (config.jwtSecret !== undefined) {
    throw new ConfigError(
      "PARLEY_JWT_SECRET",
      "is set, so the JWT key is not generated: rotate it by changing PARLEY_JWT_SECRET (tokens signed with the old value stop working)",
    );
  }
  const { store, master } = openStore(config, database);
  await generatedJwtKeys(store, master);
  const kid = `${JWT_KEY}-${now}`;
  await store.insert(kid, wrap(master, crypto.randomBytes(32).toString("hex")));
  // A key stops being needed MAX_TOKEN_TTL after the key that replaced it was created.
  const names = (await store.list())
    .map((key) => key.name)
    .filter(isJwtKeyName)
    .sort((a, b) => createdAt(a) - createdAt(b));
  const retired: string[] = [];
  for (let i = 0; i < names.length - 1; i++) {
    const replacedAt = createdAt(names[i + 1]!);
    if (replacedAt + MAX_TOKEN_TTL_SECONDS * 1000 < now) {
      await store.remove(names[i]!);
      retired.push(names[i]!);
    }
  }
  return { kid, retired };
}

/** The JWT keys as stored now, for a running server that meets a `kid` it does not know yet. */
export async function reloadJwtKeys(
  config: Config,
  database: DatabaseConnection,
): Promise<JwtKey[] | undefined> {
  if (config.jwtSecret !== undefined) return undefined;
  const { store, master } = openStore(config, database);
  return generatedJwtKeys(store, master);
}
