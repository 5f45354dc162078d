import type { EventSpine } from "../events/event-spine.js";
import type { BusMessage, RealtimeBus } from "./realtime-bus.js";
import { endsUser, isFollowedEvent } from "./stream-frames.js";
import type { BusEvent } from "./realtime-bus.js";

/**
 * The bus of a single process (SQLite): committed events straight from the spine's after-commit
 * listeners, which run in commit order, and signals as plain calls.
 */
export function createLocalBus(spine: EventSpine): RealtimeBus {
  let deliver: ((message: BusMessage) => void) | undefined;
  let unsubscribe: (() => void) | undefined;
  return {
    async start(onMessage) {
      deliver = onMessage;
      unsubscribe = spine.onEventCommitted((event, data) => {
        if (isFollowedEvent(event))
          onMessage({ kind: "event", event, data: data as BusEvent["data"] });
        else if (endsUser(event))
          onMessage({ kind: "user-ended", username: (data as { username: string }).username });
      });
    },
    async publish(message) {
      deliver?.(message);
    },
    async close() {
      unsubscribe?.();
      deliver = undefined;
    },
  };
}
