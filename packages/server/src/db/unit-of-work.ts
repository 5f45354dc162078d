import crypto from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import type { EventDataMap, EventName } from "../events/event-catalogue.js";
import {
  STATEMENT_HOLE,
  type Announce,
  type CommittedEvent,
  type Outbox,
  type SingleDelivery,
} from "../events/outbox.js";
import { currentTrace, type RequestTrace } from "../tracing/request-trace.js";
import { TransactionBatcher } from "./batched-transactions.js";
import type { DialectName } from "./dialect.js";
import type { DatabaseConnection } from "./open-database.js";
import type { Database } from "./schema.js";
import { StatementBatcher, type CombinedForm, type NamedStatement } from "./statement-batcher.js";

/**
 * A unit of work: the transaction every domain write goes through. Repositories take `tx.db`;
 * events emitted here are queued in the same transaction (the transactional outbox) and announced
 * only after it committed.
 */
export interface Tx {
  readonly db: Transaction<Database>;
  /**
   * Emits `event`: queued, in this transaction, for every enabled endpoint that hears it, and told
   * to the live stream once committed. Who hears it is the event's audience in the catalogue
   * (EVENT_AUDIENCE: what happens in a direct message reaches its members' streams, and outbound
   * webhooks only for the safety and admin events), never the caller's choice.
   */
  emit<E extends EventName>(event: E, data: EventDataMap[E]): Promise<void>;
  /** Queues one delivery to one endpoint in this transaction; answers its id. */
  enqueue(delivery: SingleDelivery): Promise<number>;
  /**
   * Says that deliveries already queued became due in this transaction (an endpoint was enabled
   * again): after the commit, every process's dispatcher is woken as for new deliveries.
   */
  deliveriesDue(): void;
}

/** The event a single-statement unit emits, its data given the id the statement inserted. */
export type StatementEvent = {
  [E in EventName]: { event: E; data: (id: number) => EventDataMap[E] };
}[EventName];

/**
 * A unit of work that is ONE PostgreSQL statement (data-modifying CTEs): its checks, its writes,
 * and the fan-out and notifications of the one event it may emit, sent in one round trip as a named
 * prepared statement. See `ParleyDatabase.statement`.
 */
export interface StatementUnit<Row, T> {
  /** Names the statement; with the text's hash, the name of its prepared statement. */
  name: string;
  /**
   * The statement's own CTEs (without `with`), parameters $1..$n. When `emit` is given, the last
   * one is named "emitting" and has at most one row, whose column "id" is the value the event's
   * data needs (the id of the row inserted): the event is emitted when that row exists, to the
   * audience the catalogue gives it.
   * The text must be fixed (values go in `values`), and must write nothing when the unit refuses
   * (its checks fail): `settle` then throws the refusal.
   */
  ctes: string;
  values: unknown[];
  /** The columns of the answer's one row, over the CTEs. */
  answer: string;
  emit?: StatementEvent;
  /**
   * Reads the answer (with "emitted_id": the id the event was emitted for, or null); answers the
   * unit's result, or throws the error of a refusal (the statement wrote nothing).
   */
  settle(row: Row & { emitted_id: number | null }): T;
  /**
   * The same unit as one row of a statement that runs many units of this name at once, when the
   * units that arrive together are combined (see StatementBatcher): their values become arrays,
   * unnested into the CTE "input" (one row per unit, in order). Its text must be fixed too.
   */
  combined?: CombinedStatement;
  /** The trace of the request the unit serves, handed down; absent: the one it carries, if any. */
  trace?: RequestTrace | undefined;
}

/** The combined form of a StatementUnit. */
export interface CombinedStatement {
  /** The columns of "input", one per value of `values`, in order; "input" adds "ord" (from 1). */
  columns: ReadonlyArray<string>;
  /** The PostgreSQL types of `values`, in order (each is sent as an array of it). */
  types: ReadonlyArray<string>;
  /**
   * CTEs over "input" that run every unit at once, with the checks of each, writing nothing for a
   * unit whose checks fail. When `emit` is given, the last one is named "emitting", with columns
   * "ord" and "id": a row per unit that emits its event. Parameters $1..$n are the
   * value arrays.
   */
  ctes: string;
  /** A query over the CTEs: one row per unit, its column "ord" and the columns of `answer`. */
  answer: string;
}

/** The database as the domain uses it: the connection plus the one way to write. */
export interface ParleyDatabase extends DatabaseConnection {
  /**
   * Runs `work` in one transaction, as part of `trace` (the request's, handed down; absent: the
   * trace the request's context carries, if any: request-trace.ts). Its writes and the deliveries its events queue commit
   * together or not at all; after the commit (never before, never on rollback) the dispatchers of
   * this process are woken and, on PostgreSQL, every other process through NOTIFY.
   *
   * On SQLite, units that arrive together share one transaction, each inside a savepoint of its
   * own, so one commit serves many (TransactionBatcher): each unit is still all or nothing, and
   * its promise settles after the shared commit. A unit must not start another unit of work from
   * inside its callback (it would wait for its own batch).
   */
  transaction<T>(work: (tx: Tx) => Promise<T>, trace?: RequestTrace): Promise<T>;
  /**
   * PostgreSQL only (SQLite has no data-modifying CTEs, and no round trips to save): runs `unit`,
   * one statement, as a unit of work with the promises of `transaction`: its writes and the
   * deliveries of its event commit together or not at all, and after the commit the dispatchers
   * are woken. The live stream's notification is part of the statement, so it is heard only if it
   * commits. Statements that arrive together share one transaction and one commit (group commit,
   * StatementBatcher), as ONE statement when they have a `combined` form; one arriving alone is
   * its own transaction, in one round trip.
   */
  statement<Row, T>(unit: StatementUnit<Row, T>): Promise<T>;
  /**
   * For the one writer that opens its own transaction, to keep its round trips (the delivery
   * engine's recording: one statement that commits by itself for a batch of successes, see
   * record-attempts.ts): `work` gets `join`, which makes a unit of work of a transaction it opened,
   * with the same `emit`. Its events are announced when `work` resolves, which it does only once
   * that transaction committed (a rollback throws, and announces nothing).
   */
  joined<T>(work: (join: (trx: Transaction<Database>) => Tx) => Promise<T>): Promise<T>;
}

/**
 * Binds a connection to the outbox: the database every service writes through. `announce` is
 * called after each commit, by this runner alone.
 */
export function withUnitOfWork(
  connection: DatabaseConnection,
  outbox: Outbox,
  announce: Announce,
): ParleyDatabase {
  const run = transactionRunner(connection.db, connection.dialect);
  const statements = connection.pgPool ? new StatementBatcher(connection.pgPool) : undefined;
  const names = new Map<string, string>();
  return {
    db: connection.db,
    dialect: connection.dialect,
    pgConfig: connection.pgConfig,
    pgPool: connection.pgPool,
    close: () => connection.close(),
    async transaction<T>(work: (tx: Tx) => Promise<T>, trace?: RequestTrace): Promise<T> {
      const unit = new Unit(outbox, trace ?? currentTrace());
      const result = await run((trx) => work(unit.over(trx)));
      unit.announceTo(announce);
      return result;
    },
    async joined<T>(work: (join: (trx: Transaction<Database>) => Tx) => Promise<T>): Promise<T> {
      const unit = new Unit(outbox, currentTrace());
      const result = await work((trx) => unit.over(trx));
      unit.announceTo(announce);
      return result;
    },
    async statement<Row, T>(unit: StatementUnit<Row, T>): Promise<T> {
      if (!statements) throw new Error("single-statement units of work need PostgreSQL");
      // Read here, in the caller's context: the batcher may build the statement in another's.
      const trace = unit.trace ?? currentTrace();
      const single = () => statementOf(unit, outbox, names, trace);
      const combined: UnitForm | undefined = unit.combined && {
        key: `${unit.name}/${unit.emit?.event ?? ""}`,
        unit: unit as StatementUnit<unknown, unknown>,
        trace,
        combine: (forms) =>
          combinedStatementOf(
            forms.map((form) => (form as UnitForm).unit),
            outbox,
            names,
            forms.map((form) => (form as UnitForm).trace),
          ),
      };
      const { rows } = await statements.run(combined ? single : single(), combined);
      const row = rows[0] as Row & { emitted_id: number | null; queued: number | string };
      // A refusal throws here: the statement wrote nothing, so there is nothing to announce.
      const result = unit.settle(row);
      const emittedId = row.emitted_id === null ? null : Number(row.emitted_id);
      const events: CommittedEvent[] =
        unit.emit && emittedId !== null
          ? [{ event: unit.emit.event, data: unit.emit.data(emittedId) }]
          : [];
      announce(events, Number(row.queued));
      return result;
    },
  };
}

/** What one unit of work emitted and queued, announced after its commit. */
class Unit {
  private queued = 0;
  private readonly emitted: CommittedEvent[] = [];

  /** `trace`: the request's, read when the unit starts (its callback may run in a batch's context). */
  constructor(
    private readonly outbox: Outbox,
    private readonly trace: RequestTrace | undefined,
  ) {}

  /** The unit's `Tx` over the transaction `trx`. */
  over(trx: Transaction<Database>): Tx {
    return {
      db: trx,
      emit: async (event, data) => {
        this.queued += await this.outbox.fanOut(trx, event, data, this.trace);
        this.emitted.push({ event, data });
      },
      enqueue: async (delivery) => {
        const id = await this.outbox.enqueue(trx, delivery, this.trace);
        this.queued += 1;
        return id;
      },
      deliveriesDue: () => {
        this.queued += 1;
      },
    };
  }

  announceTo(announce: Announce): void {
    announce(this.emitted, this.queued);
  }
}

/** The statement's full text (its CTEs, then the outbox's) and values, named after its text. */
export function statementOf<Row, T>(
  unit: StatementUnit<Row, T>,
  outbox: Outbox,
  names: Map<string, string>,
  trace: RequestTrace | undefined,
): NamedStatement {
  let text = `with ${unit.ctes}`;
  let values = unit.values;
  let extra = `0 as "queued", null::bigint as "emitted_id"`;
  if (unit.emit) {
    const { event, data } = unit.emit;
    const emit = outbox.emitInStatement(
      event,
      data(STATEMENT_HOLE) as never,
      values.length + 1,
      trace,
    );
    if (emit.sql) text += `,\n${emit.sql}`;
    values = [...values, ...emit.values];
    extra =
      `${emit.queued} as "queued", (select "id" from "emitting") as "emitted_id", ` +
      `${emit.notified} as "notified"`;
  }
  text += `\nselect ${unit.answer}, ${extra}`;
  return { name: nameOf(unit.name, text, names), text, values };
}

/** A unit's combined form, as the batcher holds it. */
interface UnitForm extends CombinedForm {
  unit: StatementUnit<unknown, unknown>;
  trace: RequestTrace | undefined;
}

/**
 * One statement running `units` (of one name and event, in order): their values as arrays
 * unnested into "input", their combined CTEs, the outbox's CTEs for every emitting row, and one
 * answer row per unit with its "ord". The deliveries queued are counted on the row of the last
 * unit that emitted (the others say 0), so the batch's wake-up is not lost with a refused unit.
 */
export function combinedStatementOf(
  units: ReadonlyArray<StatementUnit<unknown, unknown>>,
  outbox: Outbox,
  names: Map<string, string>,
  traces: ReadonlyArray<RequestTrace | undefined>,
): NamedStatement {
  const first = units[0]!;
  const form = first.combined!;
  const arrays = form.types.map((type, k) => `$${k + 1}::${type}[]`).join(", ");
  const columns = form.columns.map((column) => `"${column}"`).join(", ");
  let text =
    `with "input" as (select * from unnest(${arrays}) with ordinality as i(${columns}, "ord")),\n` +
    form.ctes;
  let values: unknown[] = form.types.map((_, k) => units.map((unit) => unit.values[k]));
  let extra = `0 as "queued", null::bigint as "emitted_id"`;
  let from = `(${form.answer}) a`;
  if (first.emit) {
    const event = first.emit.event;
    const datas = units.map((unit) => unit.emit!.data(STATEMENT_HOLE));
    const emit = outbox.emitInBatchStatement(event, datas as never, values.length + 1, traces);
    if (emit.sql) text += `,\n${emit.sql}`;
    values = [...values, ...emit.values];
    extra =
      `case when a."ord" = (select max("ord") from "emitting") then ${emit.queued} else 0 end ` +
      `as "queued", e."id" as "emitted_id", ${emit.notified} as "notified"`;
    from += ` left join "emitting" e on e."ord" = a."ord"`;
  }
  text += `\nselect a.*, ${extra}\nfrom ${from}\norder by a."ord"`;
  return { name: nameOf(`${first.name}_batch`, text, names), text, values };
}

/** One name per text: pg prepares a name once per connection and refuses a second text for it. */
function nameOf(prefix: string, text: string, names: Map<string, string>): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `${prefix}_${crypto.hash("sha1", text, "hex").slice(0, 12)}`;
    if (names.size >= 100) names.clear();
    names.set(text, name);
  }
  return name;
}

/**
 * SQLite has one connection, so concurrent writes queue for it anyway: group-commit them.
 * PostgreSQL keeps one transaction per unit on its pool of connections.
 */
function transactionRunner(
  db: Kysely<Database>,
  dialect: DialectName,
): <T>(work: (trx: Transaction<Database>) => Promise<T>) => Promise<T> {
  if (dialect === "postgres") return (work) => db.transaction().execute(work);
  const batcher = new TransactionBatcher(db);
  return (work) => batcher.run(work);
}
