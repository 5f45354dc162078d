import type { UserRole } from "../db/schema.js";

/** The authenticated caller of a request. */
export interface Principal {
  userId: number;
  username: string;
  role: UserRole;
}

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal;
  }
}
