import readline from "node:readline";

/**
 * A password from the terminal, not echoed, asked twice; or, when stdin is not a terminal (a
 * script, a test), its first line.
 */
export async function readPassword(input: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (!input.isTTY) return firstLine(input);
  const first = await askHidden(input, "New password: ");
  const second = await askHidden(input, "Again, to confirm: ");
  if (first !== second) throw new Error("the two passwords differ");
  return first;
}

async function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  throw new Error("no password on standard input");
}

function askHidden(input: NodeJS.ReadStream, prompt: string): Promise<string> {
  return new Promise((resolve) => {
    process.stderr.write(prompt);
    const lines = readline.createInterface({ input, output: process.stderr, terminal: true });
    // Echo nothing of what is typed: readline writes the line through _writeToOutput.
    (lines as unknown as { _writeToOutput: (text: string) => void })._writeToOutput = () => {};
    lines.question("", (answer) => {
      lines.close();
      process.stderr.write("\n");
      resolve(answer);
    });
  });
}
