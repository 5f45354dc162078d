#!/usr/bin/env node
import { Command, Option } from "commander";
import { ConfigError } from "./config/config-error.js";
import { SETTINGS, type SettingName } from "./config/config-schema.js";
import { loadConfig, type ConfigOverrides } from "./config/load-config.js";
import { EXIT, EXIT_CODES_HELP } from "./cli/exit-codes.js";
import { handleUsageErrors } from "./cli/handle-usage-errors.js";
import { registerInboundCommands } from "./cli/register-inbound-commands.js";
import { registerStreamCommand } from "./cli/register-stream-command.js";
import { registerUsersCommands } from "./cli/register-users-commands.js";
import { registerWebhooksCommands } from "./cli/register-webhooks-commands.js";
import fs, { readFileSync } from "node:fs";
import path from "node:path";

// The server (database drivers, Fastify, the engine) loads only for the commands that need it, so
// `parley webhooks ...` and `parley inbound ...` start quickly.
const loadServer = () => import("./server.js");
const loadStorage = async () => ({
  ...(await import("./db/migrate.js")),
  ...(await import("./db/open-database.js")),
});

/** Stops with `parley: <message>` on stderr; exit 1, or EXIT.usage for a bad flag value. */
function fail(message: string, exitCode: number = EXIT.failed): never {
  process.stderr.write(`parley: ${message}\n`);
  process.exit(exitCode);
}

function configFrom(options: Record<string, unknown>) {
  const overrides: ConfigOverrides = {};
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const value = options[name];
    if (value !== undefined) overrides[name] = value as string | boolean;
  }
  try {
    return loadConfig(process.env, overrides);
  } catch (error) {
    if (error instanceof ConfigError) fail(`invalid configuration: ${error.message}`);
    throw error;
  }
}

function withSettingFlags(
  command: Command,
  names: readonly SettingName[] = Object.keys(SETTINGS) as SettingName[],
): Command {
  for (const name of names) {
    const setting = SETTINGS[name];
    const description = `${setting.description} [env ${setting.env}${"default" in setting ? `, default ${setting.default}` : ""}]`;
    const option =
      setting.kind === "boolean"
        ? new Option(`${setting.flag} [value]`, description)
        : new Option(`${setting.flag} <value>`, description);
    command.addOption(option);
  }
  return command;
}

// src/cli.ts and dist/cli.js both sit one level below the package's package.json.
const { version } = JSON.parse(
  readFileSync(new URL("../package.json", import.meta.url), "utf8"),
) as { version: string };

const program = handleUsageErrors(new Command("parley"), process.argv)
  .description("Parley: self-hosted team chat with webhooks")
  .version(version, "-V, --version", "print the version of Parley")
  .showHelpAfterError()
  .addHelpText("after", EXIT_CODES_HELP);

withSettingFlags(program.command("serve").description("run the chat service")).action(
  async (options: Record<string, unknown>) => {
    const config = configFrom(options);
    const { startServer } = await loadServer();
    let server;
    try {
      server = await startServer(config);
    } catch (error) {
      const { explainStartError } = await import("./operations/explain-start-error.js");
      fail(`could not start: ${explainStartError(error, config)}`);
    }
    const shutdown = (signal: string) => {
      process.stderr.write(`parley: ${signal} received, shutting down\n`);
      const force = setTimeout(() => process.exit(1), 30_000);
      force.unref();
      server.close().then(
        () => process.exit(0),
        (error: unknown) => fail(`shutdown failed: ${(error as Error).message}`),
      );
    };
    process.once("SIGTERM", () => shutdown("SIGTERM"));
    process.once("SIGINT", () => shutdown("SIGINT"));
  },
);

withSettingFlags(
  program.command("migrate").description("create or update the database schema, then exit"),
  ["dataDir", "databaseUrl"],
).action(async (options: Record<string, unknown>) => {
  const config = configFrom(options);
  const { migrate, openDatabase } = await loadStorage();
  const { withStartLock } = await import("./db/start-lock.js");
  const location = {
    databaseUrl: config.databaseUrl,
    sqlitePath: path.join(config.dataDir, "parley.db"),
  };
  const database = openDatabase(location);
  try {
    // Under the start lock, as `parley serve` migrates: a server starting meanwhile waits.
    const results = await withStartLock(
      location,
      () => migrate(database.db),
      () => process.stderr.write("parley: another process is starting or migrating; waiting\n"),
    );
    const applied = results
      .filter((result) => result.status === "Success")
      .map((result) => result.migrationName);
    console.log(applied.length ? `applied: ${applied.join(", ")}` : "the schema is up to date");
  } finally {
    await database.close();
  }
});

/** Backups are of the embedded SQLite database; PostgreSQL has its own tools. */
function sqliteFileOrFail(config: { databaseUrl: string | undefined; dataDir: string }): string {
  if (config.databaseUrl)
    fail(
      "DATABASE_URL is set: back up and restore PostgreSQL with its own tools (pg_dump, " +
        "pg_restore, or continuous archiving); see docs/deployment.md#backups",
    );
  return path.join(config.dataDir, "parley.db");
}

withSettingFlags(
  program
    .command("backup")
    .description(
      "copy the SQLite database to <file> while Parley runs (an online backup: the database as it was at one instant)",
    )
    .argument("<file>", "where to write the backup (replaced if it exists)"),
  ["dataDir", "databaseUrl"],
).action(async (file: string, options: Record<string, unknown>) => {
  const source = sqliteFileOrFail(configFrom(options));
  if (!fs.existsSync(source)) fail(`there is no Parley database at ${source}`);
  const target = path.resolve(file);
  if (target === source) fail("the backup must go to another file than the database");
  const { backupDatabase } = await import("./db/backup-database.js");
  try {
    const { bytes, ms } = await backupDatabase(source, target);
    console.log(
      `backed up ${source} to ${target} (${(bytes / 1048576).toFixed(1)} MiB, ${Math.round(ms)} ms, checked)`,
    );
    process.stderr.write(
      `parley: not in the backup: the uploaded files (${path.join(path.dirname(source), "files")}/) ` +
        `and the generated keys beside the database (jwt-secret*, secret-key); copy them too ` +
        `(docs/deployment.md#backups)\n`,
    );
  } catch (error) {
    fail(`backup failed: ${(error as Error).message}`);
  }
});

withSettingFlags(
  program
    .command("restore")
    .description(
      "replace the SQLite database with a backup; stop Parley first (the database it replaces is kept beside it)",
    )
    .argument("<file>", "a backup made by `parley backup`"),
  ["dataDir", "databaseUrl"],
).action(async (file: string, options: Record<string, unknown>) => {
  const target = sqliteFileOrFail(configFrom(options));
  const { restoreDatabase, RestoreRefused } = await import("./db/restore-database.js");
  try {
    const { previous, schema } = await restoreDatabase(path.resolve(file), target);
    console.log(`restored ${path.resolve(file)} to ${target} (schema ${schema ?? "empty"})`);
    if (previous) console.log(`the database it replaced is kept as ${previous}`);
    console.log("start Parley: it migrates the restored database if it is older");
  } catch (error) {
    if (error instanceof RestoreRefused) fail(`cannot restore: ${error.message}`);
    fail(`restore failed: ${(error as Error).message}`);
  }
});

const token = program.command("token").description("bearer tokens");
withSettingFlags(token.command("create").description("mint a token with the server's key"), [
  "dataDir",
  "databaseUrl",
  "jwtSecret",
  "secretKey",
  "masterKey",
  "masterKeyFile",
  "insecureKeysInDatabase",
])
  .requiredOption("--role <role>", "admin, bot or user")
  .requiredOption(
    "--subject <username>",
    "the user the token is for (created with that role if missing)",
  )
  .option("--ttl <duration>", "lifetime: seconds, or 90s, 15m, 12h, 30d", "30d")
  .option("--init", "create the database (and its keys) if there is none yet")
  .action(
    async (
      options: Record<string, unknown> & {
        role: string;
        subject: string;
        ttl: string;
        init?: boolean;
      },
    ) => {
      if (!["admin", "bot", "user"].includes(options.role))
        fail(`--role must be admin, bot or user, got "${options.role}"`, EXIT.usage);
      const { parseTtl } = await import("./auth/token-service.js");
      let ttlSeconds: number;
      try {
        ttlSeconds = parseTtl(options.ttl);
      } catch (error) {
        fail((error as Error).message, EXIT.usage);
      }
      const { MAX_TOKEN_TTL_SECONDS } = await import("./config/server-keys.js");
      if (ttlSeconds > MAX_TOKEN_TTL_SECONDS) fail("--ttl must be at most 366 days", EXIT.usage);
      const config = configFrom(options);
      // A token minted with another install's key is refused by the running server: never create
      // a database (and fresh keys) by accident, from the wrong directory or a mistyped flag.
      const { describeDatabase } = await import("./db/describe-database.js");
      const target = await describeDatabase(config);
      if (!target.exists && !options.init)
        fail(
          `there is no Parley database at ${target.where}. Run this where \`parley serve\` keeps ` +
            `its data (--data-dir / PARLEY_DATA_DIR, or DATABASE_URL), or pass --init to create one.`,
        );
      process.stderr.write(`parley: using the database at ${target.where}\n`);
      const { createAppContext } = await import("./app-context.js");
      const { findUserByUsername, createUser } = await import("./chat/users-service.js");
      const ctx = await createAppContext(config);
      try {
        const role = options.role as "admin" | "bot" | "user";
        let user = await findUserByUsername(ctx, options.subject);
        if (!user) {
          await createUser(ctx, { username: options.subject, role });
          user = (await findUserByUsername(ctx, options.subject))!;
        }
        if (user.status !== "active") fail(`user "${user.username}" is ${user.status}`);
        if (user.role !== role)
          fail(`user "${user.username}" has the role ${user.role}, not ${role}`);
        const { token: value } = await ctx.tokens.issue({ userId: user.id, role, ttlSeconds });
        console.log(value);
      } catch (error) {
        fail((error as Error).message);
      } finally {
        await ctx.database.close();
      }
    },
  );

const keys = program.command("keys").description("the server's keys");
withSettingFlags(
  keys
    .command("rotate")
    .description(
      "make a new token-signing key (kid) the current one; tokens signed with the previous key keep working until they expire",
    ),
  ["dataDir", "databaseUrl", "jwtSecret", "masterKey", "masterKeyFile", "insecureKeysInDatabase"],
).action(async (options: Record<string, unknown>) => {
  const config = configFrom(options);
  const { migrate, openDatabase } = await loadStorage();
  const { rotateJwtKey } = await import("./config/server-keys.js");
  const database = openDatabase({
    databaseUrl: config.databaseUrl,
    sqlitePath: path.join(config.dataDir, "parley.db"),
  });
  try {
    await migrate(database.db);
    const { kid, retired } = await rotateJwtKey(config, database);
    console.log(`new token-signing key: ${kid}`);
    if (retired.length > 0)
      console.log(`deleted keys no unexpired token can use: ${retired.join(", ")}`);
    console.log("running servers pick it up at the first token that names it, or at restart");
  } catch (error) {
    fail((error as Error).message);
  } finally {
    await database.close();
  }
});

registerUsersCommands(program, {
  withSettingFlags: (command, names) => withSettingFlags(command, names as SettingName[]),
  configFrom,
  fail,
});
registerWebhooksCommands(program);
registerInboundCommands(program);
registerStreamCommand(program);

await program.parseAsync(process.argv);
