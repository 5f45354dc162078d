/** Runs `work(i)` for i in [0, count) with `parallel` of them in flight. */
export async function inParallel(
  count: number,
  parallel: number,
  work: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}
