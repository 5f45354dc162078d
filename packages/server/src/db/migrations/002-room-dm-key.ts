import type { Kysely, Migration } from "kysely";

/**
 * `rooms.dm_key` names the two members of an open direct message ("<lower id>:<higher id>"). The
 * unique index makes "create or return the existing DM" safe when both users open it at once; the
 * key is cleared when the DM is promoted, deleted or left, so the pair can open a fresh one.
 * NULLs never collide in a unique index on either database.
 */
export const roomDmKey: Migration = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async up(db: Kysely<any>) {
    await db.schema.alterTable("rooms").addColumn("dm_key", "varchar(64)").execute();
    await db.schema.createIndex("rooms_dm_key").on("rooms").column("dm_key").unique().execute();
  },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("rooms_dm_key").execute();
    await db.schema.alterTable("rooms").dropColumn("dm_key").execute();
  },
};
