import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from "kysely";
import { noteRollbackFailure } from "./database-errors.js";

/** Sees every error a query fails with, before it is thrown (to mark it, see database-errors.ts). */
export type QueryErrorHook = (error: unknown) => void;

/**
 * Kysely's dialect with two changes to its driver:
 *
 * - A ROLLBACK that fails does not replace the error that caused it. Kysely rolls back when the
 *   transaction's callback or its COMMIT throws, and throws whatever ROLLBACK throws if it fails:
 *   on a full SQLite disk, SQLite has already rolled the transaction back, and the request failed
 *   with "cannot rollback - no transaction is active" instead of SQLITE_FULL. Here the failed
 *   ROLLBACK is noted beside the first error (rollbackFailureOf) and Kysely throws the first one.
 * - `onQueryError` sees each failing query's error first.
 *
 * A connection whose ROLLBACK failed is not reused in an unknown state: SQLite has one connection
 * and no transaction is left open on it when ROLLBACK says there is none; on PostgreSQL the client
 * closes its connection when a ROLLBACK fails (BoundedClient in open-database.ts).
 */
export class GuardedDialect implements Dialect {
  constructor(
    private readonly inner: Dialect,
    private readonly onQueryError: QueryErrorHook = () => {},
  ) {}

  createDriver(): Driver {
    return new GuardedDriver(this.inner.createDriver(), this.onQueryError);
  }
  createQueryCompiler(): QueryCompiler {
    return this.inner.createQueryCompiler();
  }
  createAdapter(): DialectAdapter {
    return this.inner.createAdapter();
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return this.inner.createIntrospector(db);
  }
}

/** A connection that remembers the last error it failed with, for the ROLLBACK that follows. */
class GuardedConnection implements DatabaseConnection {
  lastError: unknown = undefined;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly onQueryError: QueryErrorHook,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      // better-sqlite3 throws synchronously from inside executeQuery: awaited here, it rejects.
      return await this.inner.executeQuery<R>(query);
    } catch (error) {
      this.failed(error);
      throw error;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }

  failed(error: unknown): void {
    this.lastError = error;
    this.onQueryError(error);
  }
}

class GuardedDriver implements Driver {
  /** The wrapper of each connection the inner driver hands out (SQLite: always the same one). */
  private readonly wrappers = new WeakMap<DatabaseConnection, GuardedConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly onQueryError: QueryErrorHook,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.wrappers.get(connection);
    if (!wrapper) {
      wrapper = new GuardedConnection(connection, this.onQueryError);
      this.wrappers.set(connection, wrapper);
    }
    wrapper.lastError = undefined;
    return wrapper;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const guarded = connection as GuardedConnection;
    guarded.lastError = undefined;
    return this.inner.beginTransaction(guarded.inner, settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const guarded = connection as GuardedConnection;
    try {
      await this.inner.commitTransaction(guarded.inner);
    } catch (error) {
      guarded.failed(error);
      throw error;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const guarded = connection as GuardedConnection;
    try {
      await this.inner.rollbackTransaction(guarded.inner);
    } catch (rollbackError) {
      // Kysely rethrows the error that made it roll back once this returns: keep that one.
      noteRollbackFailure(guarded.lastError, rollbackError);
    }
  }

  savepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler["compileQuery"],
  ): Promise<void> {
    return this.inner.savepoint!((connection as GuardedConnection).inner, name, compileQuery);
  }

  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler["compileQuery"],
  ): Promise<void> {
    return this.inner.rollbackToSavepoint!(
      (connection as GuardedConnection).inner,
      name,
      compileQuery,
    );
  }

  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler["compileQuery"],
  ): Promise<void> {
    return this.inner.releaseSavepoint!(
      (connection as GuardedConnection).inner,
      name,
      compileQuery,
    );
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection((connection as GuardedConnection).inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
