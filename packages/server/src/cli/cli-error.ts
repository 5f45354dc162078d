/** A failure the CLI explains in one line (`parley: <message>`) before exiting with status 1. */
export class CliError extends Error {
  override name = "CliError";
}
