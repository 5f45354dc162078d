import type { Command } from "commander";
import type { Config } from "../config/load-config.js";
import { API_HELP } from "./api-help.js";
import { EXIT } from "./exit-codes.js";
import { runCommand } from "./run-command.js";
import { tokensList, tokensRevoke } from "./tokens-api.js";
import {
  usersCreate,
  usersInviteApi,
  usersList,
  usersResetSignIn,
  usersRole,
  usersSetStatus,
} from "./users-api.js";

/** What the users commands need from cli.ts: its flag and config helpers. */
export interface UsersCommandSupport {
  withSettingFlags(command: Command, names: readonly string[]): Command;
  configFrom(options: Record<string, unknown>): Config;
  /** Stops with `parley: <message>`; exit 1 unless another code is given (2 for usage). */
  fail(message: string, exitCode?: number): never;
}

const DATABASE_SETTINGS = [
  "dataDir",
  "databaseUrl",
  "jwtSecret",
  "secretKey",
  "masterKey",
  "masterKeyFile",
  "insecureKeysInDatabase",
] as const;

/**
 * `parley users invite` and `parley users set-password`: run where the server keeps its data, on
 * its database directly (as `parley token create`), so they work before anyone can sign in
 * (`invite` asks the API when PARLEY_TOKEN is set and no database flag is given). `parley users
 * list|create|disable|enable|role|reset-sign-in` and `parley tokens list|revoke` call the API.
 */
export function registerUsersCommands(program: Command, support: UsersCommandSupport): void {
  const { withSettingFlags, configFrom, fail } = support;
  const users = program
    .command("users")
    .description("people: list, create, invite, disable, roles; passwords on the server");

  const openContext = async (options: Record<string, unknown>) => {
    const config = configFrom(options);
    const { describeDatabase } = await import("../db/describe-database.js");
    const target = await describeDatabase(config);
    if (!target.exists)
      fail(
        `there is no Parley database at ${target.where}. Run this where \`parley serve\` keeps ` +
          `its data (--data-dir / PARLEY_DATA_DIR, or DATABASE_URL).`,
      );
    process.stderr.write(`parley: using the database at ${target.where}\n`);
    const { createAppContext } = await import("../app-context.js");
    return createAppContext(config);
  };

  withSettingFlags(
    users
      .command("invite")
      .description("print a single-use invitation link, good for 7 days, that creates a user"),
    [...DATABASE_SETTINGS, "publicBaseUrl", "host", "port"],
  )
    .option("--role <role>", "admin, bot or user", "user")
    .option("--display-name <name>", "the name the new user is shown with")
    .addHelpText(
      "after",
      "\nWith PARLEY_TOKEN set and neither --data-dir nor --database-url given, it asks the API at PARLEY_URL instead.",
    )
    .action(async (options: Record<string, unknown> & { role: string; displayName?: string }) => {
      if (
        process.env.PARLEY_TOKEN &&
        options.dataDir === undefined &&
        options.databaseUrl === undefined
      )
        return runCommand(usersInviteApi)(options);
      if (!["admin", "bot", "user"].includes(options.role))
        fail(`--role must be admin, bot or user, got "${options.role}"`, EXIT.usage);
      if (options.displayName !== undefined && !/^.{1,200}$/u.test(options.displayName))
        fail("--display-name must be 1 to 200 characters", EXIT.usage);
      const ctx = await openContext(options);
      try {
        const { createInvite } = await import("../auth/invites-service.js");
        const base = ctx.config.publicBaseUrl ?? `http://${ctx.config.host}:${ctx.config.port}`;
        const invite = await createInvite(
          ctx,
          {
            role: options.role as "admin" | "bot" | "user",
            displayName: options.displayName,
            createdBy: null,
          },
          base,
        );
        console.log(invite.url);
        process.stderr.write(`parley: single use, until ${invite.expiresAt}\n`);
      } catch (error) {
        fail((error as Error).message);
      } finally {
        await ctx.database.close();
      }
    });

  withSettingFlags(
    users
      .command("set-password <username>")
      .description(
        "set a user's password, read from the terminal (or the first line of stdin); ends their sessions",
      ),
    [...DATABASE_SETTINGS],
  ).action(async (username: string, options: Record<string, unknown>) => {
    const { readPassword } = await import("./read-password.js");
    const password = await readPassword().catch((error: Error) => fail(error.message));
    const ctx = await openContext(options);
    try {
      const { setUserPassword } = await import("../auth/sign-in-service.js");
      const user = await setUserPassword(ctx, username, password);
      console.log(`password set for ${user.username}`);
    } catch (error) {
      fail((error as Error).message);
    } finally {
      await ctx.database.close();
    }
  });

  users
    .command("list")
    .description("list every user: role and status")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(usersList));

  users
    .command("create")
    .description("create a user (they sign in once given a password: users reset-sign-in)")
    .argument("<username>", "lowercase letters, digits, . _ -; at most 64 characters")
    .option("--role <role>", "admin, bot or user", "user")
    .option("--display-name <name>", "the name they are shown with (default the username)")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(usersCreate));

  for (const [name, enabled, what] of [
    ["disable", false, "disable a user: their sessions and tokens stop working"],
    ["enable", true, "enable a disabled user again"],
  ] as const)
    users
      .command(name)
      .description(what)
      .argument("<user>", "username or id")
      .option("--json", "print JSON")
      .addHelpText("after", API_HELP)
      .action(runCommand(usersSetStatus(enabled)));

  users
    .command("role")
    .description("give a user another role; tokens issued with the old one stop working")
    .argument("<user>", "username or id")
    .argument("<role>", "admin, bot or user")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(usersRole));

  users
    .command("reset-sign-in")
    .description(
      "end a user's sessions, remove their password, and print a single-use link to set a new one",
    )
    .argument("<user>", "username or id")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(usersResetSignIn));

  const tokens = program
    .command("tokens")
    .description("bearer tokens that still work, over the API (`parley token create` mints one)");
  tokens
    .command("list")
    .description("list the tokens that still work, by token id (never the tokens themselves)")
    .option("--user <user>", "only this user's (username or id)")
    .option("--prefix <prefix>", "only ids starting with this")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(tokensList));
  tokens
    .command("revoke")
    .description("revoke a token by its id: it stops working at once")
    .argument("<tokenId>", "the token id (tokens list shows it)")
    .option("--json", "print JSON")
    .addHelpText("after", API_HELP)
    .action(runCommand(tokensRevoke));
}
