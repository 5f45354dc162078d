import type { LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import { setUserPassword } from "../../../src/auth/sign-in-service.js";
import type { TestApp, TestUser } from "../../helpers/build-app.js";

export const PASSWORD = "correct horse battery staple";

/** A user with a password (and a JWT, as every test user has). */
export async function userWithPassword(
  t: TestApp,
  password = PASSWORD,
  role: "admin" | "bot" | "user" = "user",
): Promise<TestUser> {
  const user = await t.user(role);
  await setUserPassword(t.ctx, user.username, password);
  return user;
}

export function login(
  t: Pick<TestApp, "app">,
  username: string,
  password: string,
  headers: Record<string, string> = {},
  remoteAddress?: string,
) {
  return t.app.inject({
    method: "POST",
    url: "/api/auth/login",
    payload: { username, password },
    headers,
    ...(remoteAddress ? { remoteAddress } : {}),
  });
}

/** The parley_session cookie a response set. */
export function sessionCookie(res: LightMyRequestResponse) {
  const cookie = res.cookies.find((c) => c.name === "parley_session");
  expect(cookie, "a parley_session cookie").toBeDefined();
  return cookie!;
}

/** A signed-in browser: its cookie and the CSRF value of its session. */
export interface Browser {
  cookie: string;
  csrf: string;
  token: string;
}

export async function signIn(
  t: Pick<TestApp, "app">,
  username: string,
  password = PASSWORD,
): Promise<Browser> {
  const res = await login(t, username, password);
  expect(res.statusCode, res.body).toBe(200);
  const cookie = `parley_session=${sessionCookie(res).value}`;
  const csrf = await t.app.inject({ method: "GET", url: "/api/auth/csrf", headers: { cookie } });
  expect(csrf.statusCode, csrf.body).toBe(200);
  return { cookie, csrf: csrf.json().csrfToken as string, token: res.json().token as string };
}
