import type { UserRole } from "../db/schema.js";

/** The authenticated caller of a request. */
export interface Principal {
  userId: number;
  username: string;
  role: UserRole;
  /**
   * The session the request was made with (its cookie, or its secret as a bearer token); absent
   * for JWTs. Logout ends it; a password change ends the user's others.
   */
  session?: { idHash: string; csrfToken: string; via: "cookie" | "bearer" };
}

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
  }
}
