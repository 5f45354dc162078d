/**
 * Where the delivery engine reports what an operator should see (a lost database connection, a
 * lease that ran out). Fastify's pino logger fits it as is.
 */
export interface DeliveryLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}
