import { describe, expect, it } from "vitest";
import type { ClaimedDelivery } from "../../../src/webhooks/outbound/delivery-engine/claim-deliveries.js";
import {
  DispatcherState,
  type Finished,
} from "../../../src/webhooks/outbound/delivery-engine/dispatcher-state.js";

function row(id: number, webhookId: number): ClaimedDelivery {
  return {
    id,
    webhook_id: webhookId,
    event: "ADMIN_USER_DISABLED",
    body: "{}",
    status: "PENDING",
    attempts: 0,
    url: "https://example.test/hook",
    secret_ciphertext: "x",
    event_id: null,
    signature_scheme: "parley",
    headers_ciphertext: null,
    previous_secret_ciphertext: null,
    send_at: null,
  };
}

function finished(r: ClaimedDelivery): Finished {
  return {
    row: r,
    attempt: {
      deliveryId: r.id,
      attempt: 1,
      outcome: {
        ok: true,
        startedAt: new Date(0),
        durationMs: 1,
        responseStatus: 204,
        responseBody: "",
        error: null,
      },
    },
  };
}

function running(concurrency = 4, perEndpointLimit = 2): DispatcherState {
  const state = new DispatcherState({ concurrency, perEndpointLimit });
  state.lifecycle = "running";
  return state;
}

describe("the dispatcher's state", () => {
  it("follows a delivery from claim to recorded with every invariant holding", () => {
    const state = running();
    const a = row(1, 10);
    state.launched(a);
    expect(state.violations()).toEqual([]);
    expect(state.sending).toBe(1);
    expect(state.isIdle()).toBe(false);

    state.answered(finished(a));
    expect(state.sending).toBe(0);
    expect(state.sendingByEndpoint.size).toBe(0);
    expect(state.violations()).toEqual([]);

    state.recorder = "recording";
    const batch = state.takeBatch(100);
    expect(state.violations()).toEqual([]);
    state.recorded(batch);
    state.recorder = "idle";
    expect(state.violations()).toEqual([]);
    expect(state.isIdle()).toBe(true);
  });

  it("keeps a batch that failed to record, at the front of the queue", () => {
    const state = running();
    const [a, b] = [row(1, 10), row(2, 11)];
    state.launched(a);
    state.launched(b);
    state.answered(finished(a));
    state.recorder = "recording";
    const batch = state.takeBatch(100);
    state.answered(finished(b));
    expect(state.violations()).toEqual([]);
    state.putBack(batch);
    expect(state.toRecord.map((f) => f.row.id)).toEqual([1, 2]);
    expect(state.violations()).toEqual([]);
  });

  it("never launches a row it still has to record, nor anything while stopping", () => {
    const state = running();
    const a = row(1, 10);
    state.launched(a);
    state.answered(finished(a));
    // The lease ran out while the answer waited; a claim renewed it: not sent twice.
    expect(state.mayLaunch(a)).toBe(false);
    expect(state.mayLaunch(row(2, 10))).toBe(true);
    state.lifecycle = "stopping";
    expect(state.mayLaunch(row(3, 10))).toBe(false);
  });

  it("bounds the next claim by the free send slots and by what waits to be recorded", () => {
    const state = running(4);
    expect(state.freeSlots()).toBe(4);
    for (let id = 1; id <= 4; id++) state.launched(row(id, id));
    expect(state.freeSlots()).toBe(0);
    for (let id = 1; id <= 4; id++) state.answered(finished(row(id, id)));
    expect(state.freeSlots()).toBe(4);
    for (let id = 5; id <= 8; id++) state.launched(row(id, id));
    for (let id = 5; id <= 8; id++) state.answered(finished(row(id, id)));
    // Eight answered and none recorded (a slow database): backpressure stops the claims.
    expect(state.freeSlots()).toBe(0);
  });

  it("reports an endpoint at its cap", () => {
    const state = running(4, 2);
    state.launched(row(1, 10));
    expect(state.anyEndpointAtCap()).toBe(false);
    state.launched(row(2, 10));
    expect(state.anyEndpointAtCap()).toBe(true);
  });

  it("names each broken invariant", () => {
    const state = running(2, 1);
    state.launched(row(1, 10));
    state.launched(row(2, 10));
    state.launched(row(3, 11));
    expect(state.violations()).toEqual(
      expect.arrayContaining([
        expect.stringContaining("endpoint 10 has 2 in flight, over its cap 1"),
        expect.stringContaining("outside 0..2"),
      ]),
    );
    const other = running();
    other.unrecorded.add(99);
    expect(other.violations()).toEqual(["1 unrecorded but 0 sending + 0 waiting + 0 recording"]);
    const early = new DispatcherState({ concurrency: 1, perEndpointLimit: 1 });
    early.pass = "running";
    expect(early.violations()).toEqual(["work before start"]);
  });
});
