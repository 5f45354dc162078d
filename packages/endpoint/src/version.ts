// Kept equal to package.json's "version" by `npm version` (scripts/sync-version.mjs) and checked
// by test/version.test.ts.
export const VERSION = "1.0.0";
