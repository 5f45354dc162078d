import type { Command } from "commander";
import type { Config } from "../config/load-config.js";
import { EXIT } from "./exit-codes.js";

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
 * its database directly (as `parley token create`), so they work before anyone can sign in.
 */
export function registerUsersCommands(program: Command, support: UsersCommandSupport): void {
  const { withSettingFlags, configFrom, fail } = support;
  const users = program.command("users").description("people: invitations and passwords");

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
    .action(async (options: Record<string, unknown> & { role: string; displayName?: string }) => {
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
}
