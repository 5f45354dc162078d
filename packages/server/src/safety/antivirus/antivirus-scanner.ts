export type ScanVerdict =
  { infected: false; scanner: string } | { infected: true; scanner: string; signature: string };

/** An antivirus engine. `scan` rejects with AntivirusUnavailableError when it cannot decide. */
export interface AntivirusScanner {
  readonly name: string;
  scan(bytes: Uint8Array): Promise<ScanVerdict>;
}
