import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { describe, expect, it } from "vitest";
import { DnsLookupError } from "../../../../../src/webhooks/outbound/transport/dns-lookup-error.js";
import { createGuardedLookup } from "../../../../../src/webhooks/outbound/transport/guarded-lookup.js";
import { TargetRefusedError } from "../../../../../src/webhooks/outbound/transport/target-refused-error.js";

type Result = {
  err: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number;
};

function run(lookup: LookupFunction, all: boolean): Promise<Result> {
  return new Promise((resolve) =>
    lookup("receiver.example", { all }, (err, address, family) =>
      resolve({ err, address, family }),
    ),
  );
}

const answering =
  (answer: string | LookupAddress[], seen: Array<{ all?: boolean }> = []): LookupFunction =>
  (_hostname, options, callback) => {
    seen.push(options);
    if (typeof answer === "string") callback(null, answer, 4);
    else callback(null, answer);
  };

describe("createGuardedLookup", () => {
  const v4 = { address: "93.184.215.14", family: 4 };
  const v6 = { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 };

  it("always asks the resolver for every address", async () => {
    const seen: Array<{ all?: boolean }> = [];
    await run(createGuardedLookup(answering([v4], seen), false), false);
    expect(seen).toEqual([expect.objectContaining({ all: true })]);
  });

  it("hands the socket every checked address when it asks for all", async () => {
    const result = await run(createGuardedLookup(answering([v4, v6]), false), true);
    expect(result).toEqual({ err: null, address: [v4, v6], family: undefined });
  });

  it("hands the socket the first checked address when it asks for one", async () => {
    const result = await run(createGuardedLookup(answering([v6, v4]), false), false);
    expect(result).toEqual({ err: null, address: v6.address, family: 6 });
  });

  it("accepts a resolver that answers with a single address", async () => {
    const result = await run(createGuardedLookup(answering("93.184.215.14"), false), true);
    expect(result.address).toEqual([v4]);
  });

  it("refuses the host when one of its addresses is internal", async () => {
    const result = await run(
      createGuardedLookup(answering([v4, { address: "fd00::1", family: 6 }]), false),
      true,
    );
    expect(result.err).toBeInstanceOf(TargetRefusedError);
    expect(result.err?.message).toBe(
      "target refused: address fd00::1 is in a unique local range (resolved from receiver.example)",
    );
  });

  it("lets internal addresses through when private networks are allowed", async () => {
    const loopback = { address: "127.0.0.1", family: 4 };
    const result = await run(createGuardedLookup(answering([loopback]), true), true);
    expect(result).toEqual({ err: null, address: [loopback], family: undefined });
  });

  it("turns an empty answer into a DNS failure", async () => {
    const result = await run(createGuardedLookup(answering([]), true), true);
    expect(result.err).toBeInstanceOf(DnsLookupError);
    expect(result.err?.message).toBe("DNS lookup failed for receiver.example: no addresses");
  });
});
