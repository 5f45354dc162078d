import type { AppContext } from "./app-context.js";
import type { Metrics } from "./operations/metrics.js";

/** A long-running part of the process (the dispatcher, the retention job). */
export interface BackgroundWork {
  readonly name: string;
  /** Stops taking new work and waits for what is in flight. */
  stop(): Promise<void>;
}

/** Starts every background part this process runs. */
export async function startBackgroundWork(_ctx: AppContext, _metrics: Metrics): Promise<BackgroundWork[]> {
  const started: BackgroundWork[] = [];
  return started;
}
