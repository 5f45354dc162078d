// Kept equal to package.json's "version"; test/version.test.ts checks it.
export const VERSION = "1.0.0";
