import { sql, type RawBuilder } from "kysely";

/** Escapes `%`, `_` and `\` for a LIKE pattern with ESCAPE '\'. */
function likePrefix(prefix: string): string {
  return `${prefix.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * `lower(column) LIKE '<prefix>%'`: a prefix match, the same on both databases, whatever the
 * prefix holds (`%` and `_` match themselves). Case-insensitive for every letter on PostgreSQL,
 * for ASCII letters on SQLite (its lower() knows no others).
 */
export function startsWith(column: string, prefix: string): RawBuilder<boolean> {
  return sql<boolean>`lower(${sql.ref(column)}) like ${likePrefix(prefix)} escape '\\'`;
}
