import { EventEmitter } from "node:events";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { addressKey, ConnectionBudget } from "../../../src/http/connection-budget.js";

/** A connection as the budget sees it: its address, and whether it was destroyed. */
function connection(remoteAddress = "192.0.2.1") {
  return Object.assign(new EventEmitter(), {
    remoteAddress,
    destroyed: false,
    destroy() {
      this.destroyed = true;
    },
  });
}

function installed(limits: ConstructorParameters<typeof ConnectionBudget>[0]) {
  const server = Object.assign(new EventEmitter(), { maxConnections: 0 });
  const budget = new ConnectionBudget(limits);
  budget.install(server as unknown as Server);
  const connect = (address?: string) => {
    const socket = connection(address);
    server.emit("connection", socket);
    return socket;
  };
  return { server, budget, connect };
}

describe("ConnectionBudget", () => {
  it("caps the process at both budgets and HTTP at its own, whatever the upgraded sockets", () => {
    const { server, budget, connect } = installed({ http: 2, upgraded: 3, upgradedPerAddress: 0 });
    expect(server.maxConnections).toBe(5);
    // Each socket arrives as an HTTP connection, and upgrades.
    const upgraded = [1, 2, 3].map(() => {
      const socket = connect();
      expect(budget.upgrade(socket as unknown as Socket)).toBe(undefined);
      return socket;
    });
    expect([budget.http, budget.upgraded]).toEqual([0, 3]);
    // The upgraded sockets took none of the HTTP budget.
    const requests = [connect(), connect()];
    expect(requests.map((socket) => socket.destroyed)).toEqual([false, false]);
    expect(connect().destroyed).toBe(true);
    // And the stream's budget is spent: the next upgrade is refused, its connection stays HTTP.
    requests[1]!.emit("close");
    const asking = connect();
    expect(budget.upgrade(asking as unknown as Socket)).toBe("process");
    expect([budget.http, budget.upgraded]).toEqual([2, 3]);
    upgraded[0]!.emit("close");
    expect(budget.upgrade(asking as unknown as Socket)).toBe(undefined);
    expect([budget.http, budget.upgraded]).toEqual([1, 3]);
  });

  it("refuses an address past its share of upgraded sockets, an IPv6 /64 counting as one", () => {
    const { budget, connect } = installed({ http: 100, upgraded: 100, upgradedPerAddress: 2 });
    const upgrade = (address: string) => budget.upgrade(connect(address) as unknown as Socket);
    expect([upgrade("2001:db8:1:2::1"), upgrade("2001:db8:1:2:ffff::9")]).toEqual([
      undefined,
      undefined,
    ]);
    expect(upgrade("2001:db8:1:2:abcd::1")).toBe("address");
    expect(upgrade("2001:db8:1:3::1")).toBe(undefined);
    expect([upgrade("192.0.2.7"), upgrade("::ffff:192.0.2.7"), upgrade("192.0.2.7")]).toEqual([
      undefined,
      undefined,
      "address",
    ]);
  });

  it("names addresses by IPv4 address or IPv6 /64", () => {
    expect(addressKey("192.0.2.7")).toBe("192.0.2.7");
    expect(addressKey("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(addressKey("2001:db8:0:1:2:3:4:5")).toBe("2001:db8:0:1::/64");
    expect(addressKey(undefined)).toBe("unknown");
  });
});
