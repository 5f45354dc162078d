import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The BUILT command line (npm test builds first), run as an operator runs it. */
export const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

export interface CliRun {
  /** The exit code (1 when killed or when it could not start). */
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a `parley` child: PATH, HOME and `env`, nothing else of the test process
 * (its PARLEY_* settings, its database) leaks in.
 */
export function cliEnv(env: Record<string, string> = {}): Record<string, string> {
  return {
    ...(process.env.PATH === undefined ? {} : { PATH: process.env.PATH }),
    ...(process.env.HOME === undefined ? {} : { HOME: process.env.HOME }),
    ...env,
  };
}

/** Runs `parley <args>` to its end and gives its exit code and output. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: cliEnv(env), timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
