import { byDialect } from "../db/dialect.js";
import type { ParleyDatabase } from "../db/unit-of-work.js";
import { indexSearchBatch, isSearchIndexBehind } from "./search-index-repository.js";

/**
 * Keeps the search index up with new messages after their commit (migration 025), so that a post
 * does not pay for it in its own transaction.
 *
 * SQLite: FTS5 writes a segment of its index at every transaction and every savepoint that
 * changed it, then merges segments, so indexing each post where it commits cost posting about
 * 40% of its rate (docs/performance.md, "Search"). The indexer adds the messages committed since
 * its last run, up to BATCH per transaction, through the one writer (`database.transaction`), and
 * moves `message_search_progress.indexed_through` in the same transaction. It runs DELAY_MS after
 * a commit that created a message (MESSAGE_CREATED: a post, or a held message approved), so that
 * the posts of those milliseconds share one segment; and a search first catches it up
 * (`catchUp`), so what was posted before a search is always found: a search is never behind, the
 * index between searches is behind by at most DELAY_MS plus a batch. Edits, deletes and moderation
 * decisions keep updating the index in their own transaction (the triggers of migration 025).
 *
 * PostgreSQL: the GIN index takes new entries in its pending list at little cost, in the post's
 * transaction; nothing to do here.
 */
export interface SearchIndexer {
  /** A message was committed: index it soon. */
  nudge(): void;
  /** Resolves once every message committed before the call is in the index. */
  catchUp(): Promise<void>;
  /** Stops the timer and waits for a run in flight (before the database closes). */
  stop(): Promise<void>;
}

/**
 * How long after a post the indexer runs: the posts in between share its transaction and its FTS5
 * segment. The fewer and larger the segments, the less FTS5 spends writing and merging them per
 * message (one transaction of 80 messages costs about 11 µs a message, of 400 about 6, of 2,000
 * about 4); at 4,000 posts/s, 250 ms gathers about 1,000. What a search finds does not depend on
 * it: a search catches the index up first (at most one delay's posts, about 4 ms per 1,000).
 */
export const DELAY_MS = 250;
/** Messages indexed per transaction at most (about 10-20 ms of the writer's time). */
export const BATCH = 2_000;

export function createSearchIndexer(database: ParleyDatabase): SearchIndexer {
  // PostgreSQL indexes in the writing transaction (the GIN index's pending list).
  if (!byDialect(database.db, { sqlite: true, postgres: false })) {
    return { nudge() {}, catchUp: async () => {}, stop: async () => {} };
  }
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const indexBatch = () => database.transaction((tx) => indexSearchBatch(tx.db, BATCH));
  const behind = () => isSearchIndexBehind(database.db);

  /** Runs batches until none remains; one run at a time, a caller joining the one in flight. */
  const run = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    running ??= (async () => {
      try {
        while (await indexBatch());
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  return {
    nudge() {
      if (stopped || timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        // A failure here is retried by the next nudge or search (which reports it).
        run().catch(() => {});
      }, DELAY_MS);
      timer.unref();
    },
    async catchUp() {
      // A run in flight may have started before the caller's message committed: one more.
      if (running) await running.catch(() => {});
      if (await behind()) await run();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running?.catch(() => {});
    },
  };
}
