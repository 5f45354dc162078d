import { describe, expect, it } from "vitest";
import {
  EndpointCircuits,
  IDLE_FORGET_MS,
  sendResultOf,
  type SendResult,
} from "../../../../../src/webhooks/outbound/delivery-engine/endpoint-circuits.js";

const settings = {
  perEndpointLimit: 4,
  failureThreshold: 3,
  cooldownMs: 1_000,
  maxCooldownMs: 3_000,
};

/** Sends once to the endpoint and ends the send with `result` at `now`. */
function send(circuits: EndpointCircuits, id: number, result: SendResult, now = 0) {
  circuits.launched(id);
  return circuits.ended(id, result, now);
}

describe("endpoint windows and circuit breakers", () => {
  it("gives an endpoint never sent to a room of one, and widens it by one per answer up to the limit", () => {
    const circuits = new EndpointCircuits(settings);
    expect(circuits.rooms(0).rooms.has(7)).toBe(false);
    expect(EndpointCircuits.NEW_ENDPOINT_ROOM).toBe(1);
    for (let i = 0; i < 10; i++) send(circuits, 7, "answered");
    expect(circuits.rooms(0).rooms.get(7)).toBe(4);
    circuits.launched(7);
    circuits.launched(7);
    expect(circuits.rooms(0).rooms.get(7)).toBe(2);
  });

  it("sends from send slots only once an endpoint answered; a time-out puts its window back to one and counts its room as stalled", () => {
    const circuits = new EndpointCircuits(settings);
    expect(circuits.isProven(7)).toBe(false); // never answered: its sends take wait slots
    for (let i = 0; i < 5; i++) send(circuits, 7, "answered");
    expect(circuits.isProven(7)).toBe(true);
    send(circuits, 7, "stalled");
    expect(circuits.isProven(7)).toBe(false);
    const { rooms, stalledRoom } = circuits.rooms(0);
    expect(rooms.has(7)).toBe(false); // back to a new endpoint's room of one
    expect(stalledRoom).toBe(1);
    send(circuits, 7, "answered");
    expect(circuits.isProven(7)).toBe(true);
  });

  it("tells the first answer once, as closed, so a restarted process corrects the stored circuit", () => {
    const circuits = new EndpointCircuits(settings);
    expect(send(circuits, 7, "answered")).toEqual({
      webhookId: 7,
      circuit: "closed",
      failures: 0,
      initial: true,
    });
    expect(send(circuits, 7, "answered")).toBeUndefined();
  });

  it("opens after three stalls in a row, not after stalls an answer interrupted", () => {
    const circuits = new EndpointCircuits(settings);
    send(circuits, 7, "stalled");
    send(circuits, 7, "stalled");
    send(circuits, 7, "answered");
    send(circuits, 7, "stalled");
    expect(send(circuits, 7, "stalled")).toBeUndefined();
    expect(send(circuits, 7, "stalled", 100)).toEqual({
      webhookId: 7,
      circuit: "open",
      failures: 3,
    });
    expect(circuits.circuitOf(7)).toBe("open");
    expect(circuits.rooms(500).rooms.get(7)).toBe(0);
    expect(circuits.nextProbeAt()).toBe(1_100);
  });

  it("half-opens after the cool-down with room for one probe, reopens for twice as long when it stalls, up to the ceiling", () => {
    const circuits = new EndpointCircuits(settings);
    for (let i = 0; i < 3; i++) send(circuits, 7, "stalled", 0);
    const changes: Parameters<EndpointCircuits["rooms"]>[1] = [];
    // Room for one (a new endpoint's room, so absent from the map).
    expect(circuits.rooms(1_000, changes).rooms.get(7) ?? EndpointCircuits.NEW_ENDPOINT_ROOM).toBe(
      1,
    );
    expect(changes).toEqual([{ webhookId: 7, circuit: "half-open", failures: 0 }]);
    circuits.launched(7);
    // The probe is out: nothing more goes, and no stall but the probe's reopens it.
    expect(circuits.rooms(1_000).rooms.get(7)).toBe(0);
    expect(circuits.ended(7, "stalled", 1_500)?.circuit).toBe("open");
    expect(circuits.nextProbeAt()).toBe(3_500);
    circuits.rooms(3_500);
    circuits.launched(7);
    circuits.ended(7, "stalled", 4_000);
    expect(circuits.nextProbeAt()).toBe(7_000); // 3 s: the ceiling, not 4 s
  });

  it("closes on the probe's answer, any status, and counts endpoints by circuit", () => {
    const circuits = new EndpointCircuits(settings);
    for (let i = 0; i < 3; i++) send(circuits, 7, "stalled");
    send(circuits, 8, "answered");
    expect(circuits.counts()).toEqual({ closed: 1, open: 1, "half-open": 0 });
    circuits.rooms(1_000);
    expect(circuits.counts()).toEqual({ closed: 1, open: 0, "half-open": 1 });
    expect(send(circuits, 7, sendResultOf("http_error"), 1_100)).toEqual({
      webhookId: 7,
      circuit: "closed",
      failures: 0,
    });
    expect(circuits.nextProbeAt()).toBeNull();
  });

  it("sorts attempt outcomes: answers, stalls, and the SSRF guard's refusals that say nothing", () => {
    expect(sendResultOf("success")).toBe("answered");
    expect(sendResultOf("http_error")).toBe("answered");
    for (const kind of ["timeout", "connection_error", "dns_error", "tls_error"] as const)
      expect(sendResultOf(kind)).toBe("stalled");
    expect(sendResultOf("refused")).toBe("other");
  });

  it("reports an endpoint with sends out and a full window, but not an open one waiting for its probe", () => {
    const circuits = new EndpointCircuits(settings);
    expect(circuits.isFull(7)).toBe(false);
    circuits.launched(7);
    expect(circuits.isFull(7)).toBe(true);
    circuits.ended(7, "answered", 0);
    expect(circuits.isFull(7)).toBe(false);
    for (let i = 0; i < 3; i++) send(circuits, 8, "stalled");
    circuits.launched(8); // a send from before it opened, still out
    expect(circuits.isFull(8)).toBe(false);
  });

  it("forgets a closed endpoint idle for ten minutes, but never an open one or one with sends out", () => {
    const circuits = new EndpointCircuits(settings);
    for (let i = 0; i < 5; i++) send(circuits, 7, "answered", 0);
    for (let i = 0; i < 3; i++) send(circuits, 8, "stalled", 0);
    circuits.launched(9);
    const later = IDLE_FORGET_MS + 1;
    expect(circuits.rooms(IDLE_FORGET_MS).rooms.get(7)).toBe(4);
    const { rooms } = circuits.rooms(later);
    expect(rooms.has(7)).toBe(false); // a new endpoint's room of one again
    expect(circuits.isProven(7)).toBe(false);
    expect(circuits.circuitOf(8)).toBe("half-open"); // open, then half-open: kept
    expect(rooms.get(9)).toBe(0); // its send is still out
    expect(circuits.counts()).toEqual({ closed: 1, open: 0, "half-open": 1 });
  });
});
