import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { DnsLookupError } from "./dns-lookup-error.js";
import { checkAddress } from "./ssrf-guard.js";
import { TargetRefusedError } from "./target-refused-error.js";

/**
 * A `lookup` for the sockets the sender opens: resolves every address of the host, refuses the
 * host when any of them is refused, and hands the socket only addresses that passed the check.
 * Because the check runs inside the socket's own connect, the address checked is the address
 * connected to; no second resolution can swap in another (DNS rebinding). TLS still verifies the
 * certificate against the host name, which the socket keeps for SNI.
 */
export function createGuardedLookup(
  resolve: LookupFunction,
  allowPrivateNetworks: boolean,
): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, result) => {
      if (err) {
        callback(new DnsLookupError(hostname, err.code ?? err.message, { cause: err }), "");
        return;
      }
      const addresses: LookupAddress[] =
        typeof result === "string" ? [{ address: result, family: familyOf(result) }] : result;
      if (addresses.length === 0) {
        callback(new DnsLookupError(hostname, "no addresses"), "");
        return;
      }
      if (!allowPrivateNetworks) {
        for (const { address } of addresses) {
          const check = checkAddress(address);
          // One refused answer refuses the host: a name that mixes public and internal answers is
          // how rebinding is usually attempted, and a partial answer would make delivery flaky.
          if (!check.allowed) {
            callback(new TargetRefusedError(`${check.reason} (resolved from ${hostname})`), "");
            return;
          }
        }
      }
      if (options.all) {
        callback(null, addresses);
      } else {
        const [first] = addresses as [LookupAddress];
        callback(null, first.address, first.family);
      }
    });
  };
}

function familyOf(address: string): number {
  return address.includes(":") ? 6 : 4;
}
