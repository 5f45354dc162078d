import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load-config.js";
import { describeDatabase } from "../../../src/db/describe-database.js";
import { migrate } from "../../../src/db/migrate.js";
import { openDatabase } from "../../../src/db/open-database.js";
import { describeEachDialect } from "../../helpers/dialects.js";

describeEachDialect("describeDatabase on $name", (dialect) => {
  it("tells an install Parley has set up from one it has not, and where it is", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-describe-"));
    if (dialect.name === "sqlite") {
      const config = loadConfig({}, { dataDir });
      const file = path.join(dataDir, "parley.db");
      expect(await describeDatabase(config)).toEqual({ where: file, exists: false });
      const connection = openDatabase({ sqlitePath: file });
      await migrate(connection.db);
      await connection.close();
      expect(await describeDatabase(config)).toEqual({ where: file, exists: true });
      return;
    }
    const test = await dialect.open();
    try {
      const config = loadConfig({}, { dataDir, databaseUrl: test.env.DATABASE_URL! });
      const before = await describeDatabase(config);
      expect(before.exists).toBe(false);
      expect(before.where).toContain("127.0.0.1");
      await migrate(test.database.db);
      expect((await describeDatabase(config)).exists).toBe(true);
    } finally {
      await test.cleanup();
    }
  });
});
