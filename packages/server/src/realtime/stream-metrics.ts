import client from "prom-client";

/** Why an upgrade was refused: the process's budget is spent, or the client address's share. */
export type UpgradeRefusal = "process" | "address";

export interface StreamMetrics {
  readonly events: client.Counter<"event">;
  readonly framesSent: client.Counter;
  readonly writes: client.Counter;
  readonly slowDropped: client.Counter;
  readonly deadDropped: client.Counter;
  readonly refused: client.Counter<"limit">;
}

/**
 * The stream's instruments on /metrics. The gauges are read from the gateway at scrape time:
 * open connections, room subscriptions, and the bytes written but not yet read by clients (the
 * backpressure the server is holding; each connection is cut off past its own limit).
 */
export function createStreamMetrics(
  registry: client.Registry,
  read: { connections(): number; subscriptions(): number; bufferedBytes(): number },
): StreamMetrics {
  new client.Gauge({
    name: "parley_stream_connections",
    help: "Open live-stream WebSocket connections of this process",
    registers: [registry],
    collect() {
      this.set(read.connections());
    },
  });
  new client.Gauge({
    name: "parley_stream_subscriptions",
    help: "Room subscriptions of this process's live-stream connections",
    registers: [registry],
    collect() {
      this.set(read.subscriptions());
    },
  });
  new client.Gauge({
    name: "parley_stream_send_buffer_bytes",
    help: "Bytes written to live-stream clients and not yet read by them, summed over connections",
    registers: [registry],
    collect() {
      this.set(read.bufferedBytes());
    },
  });
  return {
    events: new client.Counter({
      name: "parley_stream_events_total",
      help: "Committed events the live stream of this process received, by event",
      labelNames: ["event"] as const,
      registers: [registry],
    }),
    framesSent: new client.Counter({
      name: "parley_stream_frames_sent_total",
      help: "Room frames (events, presence) queued to live-stream connections",
      registers: [registry],
    }),
    writes: new client.Counter({
      name: "parley_stream_writes_total",
      help: "Writes to live-stream sockets; each carries every frame its connection queued since the last",
      registers: [registry],
    }),
    slowDropped: new client.Counter({
      name: "parley_stream_slow_consumers_dropped_total",
      help: "Live-stream connections closed because their unread frames exceeded the limit",
      registers: [registry],
    }),
    deadDropped: new client.Counter({
      name: "parley_stream_dead_connections_dropped_total",
      help: "Live-stream connections closed because they did not answer a ping",
      registers: [registry],
    }),
    refused: new client.Counter({
      name: "parley_stream_refused_total",
      help: "Live-stream sockets refused or closed by a limit: process (the stream's budget, 503), address (429), user (4429), frame_rate (1008)",
      labelNames: ["limit"] as const,
      registers: [registry],
    }),
  };
}
