import type { Server } from "node:http";
import type { Socket } from "node:net";
import ipaddr from "ipaddr.js";
import type { UpgradeRefusal } from "../realtime/stream-metrics.js";

export interface ConnectionLimits {
  /** Plain HTTP connections (PARLEY_HTTP_MAX_CONNECTIONS). */
  http: number;
  /** Upgraded sockets: the live stream's (PARLEY_STREAM_MAX_SOCKETS). */
  upgraded: number;
  /** Upgraded sockets of one client address (PARLEY_STREAM_MAX_SOCKETS_PER_ADDRESS); 0: none. */
  upgradedPerAddress: number;
}

/**
 * The process's connections as two budgets. Node's `maxConnections` counts every socket the
 * server accepted, upgraded or not, so long-lived WebSockets would take the places of requests:
 * 1,024 stream sockets of one user left `/healthz` and every API call waiting. Here Node's cap is
 * the sum of both budgets (the hard limit on file descriptors), and the HTTP budget is enforced
 * on the sockets that are not upgraded: a connection past it is closed at once, as Node would.
 * A socket moves to the upgraded budget when the stream accepts its upgrade (`upgrade()`), which
 * refuses past the stream's budget or the client address's share of it, before anything is
 * upgraded; it leaves when the socket closes.
 */
export class ConnectionBudget {
  private httpOpen = 0;
  private upgradedOpen = 0;
  private readonly perAddress = new Map<string, number>();
  /** The sockets counted in each budget. */
  private readonly httpSockets = new WeakSet<Socket>();
  private readonly upgradedSockets = new WeakSet<Socket>();

  constructor(private readonly limits: ConnectionLimits) {}

  /** Applies the budgets to `server`'s connections. */
  install(server: Server): void {
    server.maxConnections = this.limits.http + this.limits.upgraded;
    server.on("connection", (socket: Socket) => {
      if (this.httpOpen >= this.limits.http) {
        socket.destroy();
        return;
      }
      this.httpOpen++;
      this.httpSockets.add(socket);
      socket.once("close", () => {
        if (this.httpSockets.delete(socket)) this.httpOpen--;
      });
    });
  }

  /** Plain HTTP connections open now. */
  get http(): number {
    return this.httpOpen;
  }

  /** Upgraded sockets open now. */
  get upgraded(): number {
    return this.upgradedOpen;
  }

  /**
   * Takes an upgraded socket's place for `socket` (an HTTP connection asking to upgrade), or says
   * why there is none. The place is given back when the socket closes.
   */
  upgrade(socket: Socket): UpgradeRefusal | undefined {
    if (this.upgradedSockets.has(socket)) return undefined;
    if (this.upgradedOpen >= this.limits.upgraded) return "process";
    const address = addressKey(socket.remoteAddress);
    const fromAddress = this.perAddress.get(address) ?? 0;
    if (this.limits.upgradedPerAddress > 0 && fromAddress >= this.limits.upgradedPerAddress)
      return "address";
    this.perAddress.set(address, fromAddress + 1);
    this.upgradedSockets.add(socket);
    this.upgradedOpen++;
    if (this.httpSockets.delete(socket)) this.httpOpen--;
    socket.once("close", () => {
      this.upgradedOpen--;
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left === 0) this.perAddress.delete(address);
      else this.perAddress.set(address, left);
    });
    return undefined;
  }
}

/**
 * The address a client is counted under: itself for IPv4, its /64 for IPv6 (one host or home
 * network usually holds a whole /64, and could otherwise take a new address per socket).
 */
export function addressKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || !ipaddr.isValid(remoteAddress)) return "unknown";
  const address = ipaddr.process(remoteAddress);
  if (address.kind() === "ipv4") return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(":")}::/64`;
}
