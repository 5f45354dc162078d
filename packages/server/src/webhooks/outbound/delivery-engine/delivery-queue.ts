import type { Kysely, Transaction } from "kysely";
import type { Circuit, Database } from "../../../db/schema.js";
import type { ParleyDatabase, Tx } from "../../../db/unit-of-work.js";
import { eventData } from "../../../events/event-catalogue.js";
import { claimDeliveries, type ClaimedDelivery, type ClaimOptions } from "./claim-deliveries.js";
import { expireSecrets } from "./expire-secrets.js";
import { nextDueTime } from "./next-due-time.js";
import {
  recordAttempts,
  type AutoDisableRule,
  type DisabledEndpoint,
  type FinishedAttempt,
  type RecordedTransition,
} from "./record-attempts.js";
import type { RetryPolicy } from "./backoff-schedule.js";

/**
 * The queue verbs the dispatcher runs, each a file of its own with its SQL in plain view and the
 * reasons for its locking: claim (claim-deliveries.ts), record (record-attempts.ts), the next
 * due time (next-due-time.ts) and the end of rotation overlaps (expire-secrets.ts). The
 * dispatcher gets them through its constructor, so it holds no query of its own.
 */
export interface DeliveryQueue {
  claim(options: ClaimOptions): Promise<ClaimedDelivery[]>;
  record(
    attempts: readonly FinishedAttempt[],
    options: { workerId: string; policy: RetryPolicy; now: number },
  ): Promise<RecordedTransition[]>;
  nextDueTime(now: number): Promise<number | null>;
  /** Deletes the old secrets whose rotation overlap is over; answers how many. */
  expireSecrets(now: number): Promise<number>;
  /** Stores an endpoint's circuit, as its health shows it. */
  recordCircuit(webhookId: number, circuit: Circuit, at: number): Promise<void>;
  /**
   * Marks endpoints verified whose receiver echoed their current challenge (a challenge of a
   * replaced url no longer counts), and announces their held deliveries as due; answers how many.
   */
  markVerified(answers: ReadonlyArray<{ webhookId: number; challenge: string }>): Promise<number>;
}

export interface QueueHooks {
  /**
   * The unit of work WEBHOOK_ENDPOINT_DISABLED is emitted through (ctx.database), in the
   * recording's own transaction; without it the event is not emitted.
   */
  events?: Pick<ParleyDatabase, "joined">;
  autoDisable?: AutoDisableRule;
  /** After the commit: endpoints disabled by a 410 or the rule. */
  onDisabled?(disabled: readonly DisabledEndpoint[]): void;
  /** Failures whose retry waits for the receiver's Retry-After. */
  onRetryAfter?(count: number): void;
}

export function deliveryQueueOn(db: Kysely<Database>, hooks: QueueHooks = {}): DeliveryQueue {
  return {
    claim: (options) => claimDeliveries(db, options),
    async record(attempts, options) {
      let disabled: DisabledEndpoint[] = [];
      // The recording opens its own transaction (its round trips are counted, record-attempts.ts);
      // the unit of work joins it, so the event is emitted as every other one is, with the
      // disable, and announced once it committed.
      const record = (join?: (trx: Transaction<Database>) => Tx) =>
        recordAttempts(db, attempts, {
          ...options,
          autoDisable: hooks.autoDisable,
          async endpointsDisabled(trx, list) {
            disabled = list;
            if (!join) return;
            const tx = join(trx);
            for (const endpoint of list)
              await tx.emit(
                "WEBHOOK_ENDPOINT_DISABLED",
                eventData.webhookEndpointDisabled(endpoint),
              );
          },
          ...(hooks.onRetryAfter ? { retryAfterHonoured: hooks.onRetryAfter } : {}),
        });
      const transitions = await (hooks.events ? hooks.events.joined(record) : record());
      if (disabled.length > 0) hooks.onDisabled?.(disabled);
      return transitions;
    },
    nextDueTime: (now) => nextDueTime(db, now),
    expireSecrets: (now) => expireSecrets(db, now),
    async markVerified(answers) {
      const mark = async (trx: Transaction<Database>) => {
        let marked = 0;
        for (const { webhookId, challenge } of answers) {
          const result = await trx
            .updateTable("webhooks")
            .set({ verification: "verified" })
            .where("id", "=", webhookId)
            .where("verification_challenge", "=", challenge)
            .where("verification", "!=", "verified")
            .executeTakeFirst();
          marked += Number(result.numUpdatedRows);
        }
        return marked;
      };
      const run = (join?: (trx: Transaction<Database>) => Tx) =>
        db.transaction().execute(async (trx) => {
          const marked = await mark(trx);
          // The deliveries it held are due now: every process's dispatcher is woken.
          if (marked > 0) join?.(trx).deliveriesDue();
          return marked;
        });
      return hooks.events ? hooks.events.joined(run) : run();
    },
    async recordCircuit(webhookId, circuit, at) {
      await db
        .updateTable("webhooks")
        .set({ circuit, circuit_changed_at: at })
        .where("id", "=", webhookId)
        .execute();
    },
  };
}
