/** A setting that cannot be used; the message names the variable and what is wrong. */
export class ConfigError extends Error {
  readonly code = "invalid_config";
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = "ConfigError";
  }
}
