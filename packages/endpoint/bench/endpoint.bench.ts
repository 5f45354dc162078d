// Throughput of @parley/endpoint (the built dist, i.e. what ships) against @octokit/endpoint, in
// one process: a warm-up, then rounds that time each side for a fixed number of calls per case,
// alternating which side goes first so neither always runs on a warmer or cooler machine.
// Run: npm run build && npm run bench -w @parley/endpoint
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { endpoint as octokitEndpoint } from "@octokit/endpoint";
import { endpoint as parleyEndpoint } from "../dist/index.js";

// A full collection before each timed run, so neither side pays for the other's garbage.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

const ROUNDS = 15;
const WARMUP_ROUNDS = 2;
const CALLS_PER_CASE = 20_000;

// The same defaults on both sides: a base url, a credential and an organisation parameter.
const DEFAULTS = {
  baseUrl: "http://localhost:8080",
  headers: { authorization: "token 5f2b7c0e8d" },
  org: "parley",
};

type Call = [route: string, options: Record<string, unknown>];

const upload = Buffer.from("meeting notes\n");
const CASES: Record<string, Call> = {
  "GET + query": [
    "GET /rooms/{roomId}/messages",
    { roomId: 42, limit: 50, cursor: "eyJpZCI6MTIzfQ", sort: "desc" },
  ],
  "POST + JSON body": [
    "POST /orgs/{org}/rooms/{roomId}/messages",
    { roomId: 42, content: "Hello **team**", contentFormat: "markdown", mentions: [7, 9] },
  ],
  ":var + mediaType.format": [
    "GET /orgs/:org/rooms/:roomId/messages/:messageId",
    { roomId: 42, messageId: 1001, mediaType: { format: "text+json" } },
  ],
  "absolute {?name,label} + data": [
    "POST https://uploads.example.com/rooms/{roomId}/files{?name,label}",
    {
      roomId: 42,
      name: "notes 2026.txt",
      label: "draft",
      data: upload,
      headers: { "content-type": "text/plain" },
    },
  ],
};

type Endpoint = (route: string, options: Record<string, unknown>) => { url: string };
const sides: Record<string, Endpoint> = {
  "@parley/endpoint": parleyEndpoint.defaults(DEFAULTS) as Endpoint,
  "@octokit/endpoint": octokitEndpoint.defaults(DEFAULTS) as unknown as Endpoint,
};
const [PARLEY, OCTOKIT] = Object.keys(sides) as [string, string];

// Both sides must build the same request, or the comparison means nothing.
for (const [name, [route, options]] of Object.entries(CASES)) {
  const [a, b] = [sides[PARLEY]!(route, options), sides[OCTOKIT]!(route, options)];
  if (a.url !== b.url) throw new Error(`${name}: urls differ\n  ${a.url}\n  ${b.url}`);
}

let sink = 0;
function time(fn: Endpoint, [route, options]: Call): number {
  collectGarbage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < CALLS_PER_CASE; i++) sink += fn(route, options).url.length;
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

// opsPerSecond[side][case] = one value per round; "overall" = all cases' calls / their total time.
const opsPerSecond: Record<string, Record<string, number[]>> = {};
for (const side of [PARLEY, OCTOKIT]) {
  opsPerSecond[side] = Object.fromEntries(
    [...Object.keys(CASES), "overall"].map((name) => [name, [] as number[]]),
  );
}

const started = Date.now();
for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
  const order = round % 2 === 0 ? [PARLEY, OCTOKIT] : [OCTOKIT, PARLEY];
  for (const side of order) {
    let total = 0;
    for (const [name, call] of Object.entries(CASES)) {
      const seconds = time(sides[side]!, call);
      total += seconds;
      if (round >= WARMUP_ROUNDS) opsPerSecond[side]![name]!.push(CALLS_PER_CASE / seconds);
    }
    if (round >= WARMUP_ROUNDS) {
      opsPerSecond[side]!.overall!.push((CALLS_PER_CASE * Object.keys(CASES).length) / total);
    }
  }
}

const format = (ops: number): string => Math.round(ops).toLocaleString("en-US").padStart(11);
console.log(
  `Node ${process.version}, ${ROUNDS} rounds of ${CALLS_PER_CASE.toLocaleString("en-US")} calls per case ` +
    `(after ${WARMUP_ROUNDS} warm-up rounds), ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
);
console.log(
  `${"case".padEnd(32)}${"parley ops/s".padStart(13)}${"octokit ops/s".padStart(15)}  ratio (median of rounds)`,
);
for (const name of [...Object.keys(CASES), "overall"]) {
  const parley = opsPerSecond[PARLEY]![name]!;
  const octokit = opsPerSecond[OCTOKIT]![name]!;
  const ratio = median(parley.map((ops, round) => ops / octokit[round]!));
  console.log(
    `${name.padEnd(32)}${format(median(parley))}  ${format(median(octokit))}    ${ratio.toFixed(2)}x`,
  );
}
if (sink === 0) console.log("(no work was measured)");
