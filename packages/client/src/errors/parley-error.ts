/** The base of every error @parley/client throws: `error instanceof ParleyError` catches them all. */
export class ParleyError extends Error {
  override name = "ParleyError";

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
