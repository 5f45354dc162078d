/**
 * A small tmpfs of the test's own, for tests that fill a disk (root only):
 *
 *   const disk = await mountTmpfs(4);   // 4 MiB, mounted on a new temp dir
 *   disk.dir                            // where to put the files
 *   disk.fill()                         // writes a file until the disk is full
 *   disk.free()                         // removes that file
 *   await disk.unmount();               // and removes the dir
 */
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface Tmpfs {
  readonly dir: string;
  /** Writes a filler file until the file system refuses (ENOSPC); answers the bytes written. */
  fill(): number;
  /** Deletes the filler file. */
  free(): void;
  unmount(): Promise<void>;
}

export async function mountTmpfs(sizeMiB: number): Promise<Tmpfs> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-tmpfs-"));
  try {
    await run("mount", ["-t", "tmpfs", "-o", `size=${sizeMiB}m,mode=0700`, "tmpfs", dir]);
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let mounted = true;
  const filler = path.join(dir, "filler");
  // A test that failed before unmount() must not leave the mount behind.
  const cleanup = () => {
    if (!mounted) return;
    try {
      fs.rmSync(filler, { force: true });
      // Lazy: a process that still has a file open there (a killed server) does not block it.
      execFileSync("umount", ["-l", dir]);
    } catch {
      // best effort at exit
    }
  };
  process.once("exit", cleanup);
  return {
    dir,
    fill() {
      const fd = fs.openSync(filler, "a");
      const block = Buffer.alloc(64 * 1024);
      let written = 0;
      try {
        for (;;) written += fs.writeSync(fd, block);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      } finally {
        fs.closeSync(fd);
      }
      // The last blocks: what a 64 KiB write did not fit.
      const fd2 = fs.openSync(filler, "a");
      try {
        for (;;) written += fs.writeSync(fd2, block, 0, 512);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      } finally {
        fs.closeSync(fd2);
      }
      return written;
    },
    free() {
      fs.rmSync(filler, { force: true });
    },
    async unmount() {
      if (!mounted) return;
      mounted = false;
      process.removeListener("exit", cleanup);
      fs.rmSync(filler, { force: true });
      await run("umount", ["-l", dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
