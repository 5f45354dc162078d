import { paginate, type RequestInterface, type User } from "@parley/client";
import { apiFromEnv } from "./api-from-env.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { EXIT } from "./exit-codes.js";
import { formatTable, printJson } from "./format-table.js";
import { parseChoice } from "./parse-choice.js";

const ROLES = ["admin", "bot", "user"] as const;

/**
 * A user named by username or id: an id is used as it is, a username is looked up in the admin
 * users list (exit 3 when there is none).
 */
export async function findUser(api: RequestInterface, nameOrId: string): Promise<User> {
  const text = nameOrId.trim();
  if (/^[1-9]\d{0,14}$/.test(text))
    return (await api("GET /api/admin/users/{id}", { id: Number(text) })).data;
  const users = await paginate.all(api, "GET /api/admin/users", { limit: 200 });
  const user = users.find((u) => u.username === text.toLowerCase());
  if (user === undefined)
    throw new CliError(`no user "${text}"`, { exitCode: EXIT.notFound, code: "not_found" });
  return user;
}

/** `parley users list`: every user with their role and status. */
export async function usersList(io: CliIo, options: { json?: boolean }): Promise<void> {
  const { api } = apiFromEnv(io.env);
  const users = await paginate.all(api, "GET /api/admin/users", { limit: 200 });
  if (options.json) return printJson(io.out, users);
  for (const line of formatTable(
    users,
    [
      ["id", (u) => u.id],
      ["username", (u) => u.username],
      ["name", (u) => u.displayName],
      ["role", (u) => u.role],
      ["status", (u) => u.status],
      ["created", (u) => u.createdAt],
    ],
    io.columns,
  ))
    io.out(line);
}

/** `parley users create <username>`: a user who signs in once given a password or an identity. */
export async function usersCreate(
  io: CliIo,
  username: string,
  options: { role: string; displayName?: string; json?: boolean },
): Promise<void> {
  const role = parseChoice(options.role, ROLES, "--role");
  const { api } = apiFromEnv(io.env);
  const { data: user } = await api("POST /api/admin/users", {
    username,
    role,
    ...(options.displayName === undefined ? {} : { displayName: options.displayName }),
  });
  if (options.json) return printJson(io.out, user);
  io.out(`Created user ${user.id} ${user.username} ("${user.displayName}"), role ${user.role}.`);
  io.out(
    `  To sign in: \`parley users reset-sign-in ${user.username}\` prints a link to set a password.`,
  );
}

/** `parley users invite` over the API: a single-use link that creates a user. */
export async function usersInviteApi(
  io: CliIo,
  options: { role: string; displayName?: string },
): Promise<void> {
  const role = parseChoice(options.role, ROLES, "--role");
  const { api, baseUrl } = apiFromEnv(io.env);
  io.err(`parley: using the API at ${baseUrl}`);
  const { data } = await api("POST /api/admin/invites", {
    role,
    ...(options.displayName === undefined ? {} : { displayName: options.displayName }),
  });
  io.out(data.url);
  io.err(`parley: single use, until ${data.expiresAt}`);
}

/** `parley users disable|enable <user>`: a disabled user's sessions and tokens stop working. */
export function usersSetStatus(enabled: boolean) {
  return async (io: CliIo, nameOrId: string, options: { json?: boolean }): Promise<void> => {
    const { api } = apiFromEnv(io.env);
    const { id } = await findUser(api, nameOrId);
    const { data: user } = enabled
      ? await api("POST /api/admin/users/{id}/enable", { id })
      : await api("POST /api/admin/users/{id}/disable", { id });
    if (options.json) return printJson(io.out, user);
    io.out(
      enabled
        ? `Enabled ${user.username}: they can sign in again.`
        : `Disabled ${user.username}: their sessions and tokens stopped working.`,
    );
  };
}

/** `parley users role <user> <role>`: tokens issued with the old role stop working. */
export async function usersRole(
  io: CliIo,
  nameOrId: string,
  roleText: string,
  options: { json?: boolean },
): Promise<void> {
  const role = parseChoice(roleText, ROLES, "role");
  const { api } = apiFromEnv(io.env);
  const { id } = await findUser(api, nameOrId);
  const { data: user } = await api("PATCH /api/admin/users/{id}", { id, role });
  if (options.json) return printJson(io.out, user);
  io.out(`${user.username} is now ${user.role}; tokens issued with another role stopped working.`);
}

/** `parley users reset-sign-in <user>`: ends their sessions and prints a link to set a password. */
export async function usersResetSignIn(
  io: CliIo,
  nameOrId: string,
  options: { json?: boolean },
): Promise<void> {
  const { api } = apiFromEnv(io.env);
  const { id, username } = await findUser(api, nameOrId);
  const { data } = await api("POST /api/admin/users/{id}/reset-sign-in", { id });
  if (options.json) return printJson(io.out, data);
  io.out(data.url);
  io.err(`parley: ${username} sets a new password there; single use, until ${data.expiresAt}`);
}
