import { describe, expect, it } from "vitest";
import type { ClaimedDelivery } from "../../../../../src/webhooks/outbound/delivery-engine/claim-deliveries.js";
import {
  DispatcherState,
  type Finished,
} from "../../../../../src/webhooks/outbound/delivery-engine/dispatcher-state.js";

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
    auth_ciphertext: null,
    tls_ciphertext: null,
    signing_key_ciphertext: null,
    previous_signing_key_ciphertext: null,
    send_at: null,
    lane: null,
    payload_format: "parley",
    trace_context: 0,
    trace_parent: null,
    trace_state: null,
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

function running(concurrency = 4, perEndpointLimit = 2, waitLimit = 0): DispatcherState {
  const state = new DispatcherState({ concurrency, perEndpointLimit, waitLimit });
  state.lifecycle = "running";
  return state;
}

describe("the dispatcher's state", () => {
  it("follows a delivery from claim to recorded with every invariant holding", () => {
    const state = running();
    const a = row(1, 10);
    state.launched(a, "send");
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
    state.launched(a, "send");
    state.launched(b, "send");
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
    state.launched(a, "send");
    state.answered(finished(a));
    // The lease ran out while the answer waited; a claim renewed it: not sent twice.
    expect(state.mayLaunch(a)).toBe(false);
    expect(state.mayLaunch(row(2, 10))).toBe(true);
    state.lifecycle = "stopping";
    expect(state.mayLaunch(row(3, 10))).toBe(false);
  });

  it("bounds the next claim by the free slots and by what waits to be recorded", () => {
    const state = running(4);
    expect(state.freeSlots()).toBe(4);
    for (let id = 1; id <= 4; id++) state.launched(row(id, id), "send");
    expect(state.freeSlots()).toBe(0);
    for (let id = 1; id <= 4; id++) state.answered(finished(row(id, id)));
    expect(state.freeSlots()).toBe(4);
    for (let id = 5; id <= 8; id++) state.launched(row(id, id), "send");
    for (let id = 5; id <= 8; id++) state.answered(finished(row(id, id)));
    // Eight answered and none recorded (a slow database): backpressure stops the claims.
    expect(state.freeSlots()).toBe(0);
  });

  it("counts wait slots in the next claim only for stalled endpoints' room", () => {
    const state = running(2, 4, 8);
    expect(state.freeSlots()).toBe(2);
    expect(state.freeSlots(3)).toBe(5);
    expect(state.freeSlots(20)).toBe(10);
    state.launched(row(1, 10), "send");
    state.launched(row(2, 11), "wait");
    expect(state.freeSlots(20)).toBe(8);
    expect(state.maxUnrecorded()).toBe(12);
    expect(state.violations()).toEqual([]);
  });

  it("sends to the preferred pool while it has room, else to the other", () => {
    const state = running(1, 4, 1);
    expect(state.poolFor("send")).toBe("send");
    expect(state.poolFor("wait")).toBe("wait");
    state.launched(row(1, 10), "send");
    expect(state.poolFor("send")).toBe("wait");
    state.launched(row(2, 11), "wait");
    // Both full: the claim never takes more than the free slots, so this is only a fallback.
    expect(state.poolFor("wait")).toBe("wait");
  });

  it("moves a slow send from its send slot to a wait slot, freeing the send slot", () => {
    const state = running(1, 4, 1);
    const slow = row(1, 10);
    state.launched(slow, "send");
    expect(state.freeSlots()).toBe(0);
    expect(state.demote(slow.id)).toBe(true);
    expect(state.freeSlots()).toBe(1);
    expect([state.sending, state.waiting]).toEqual([0, 1]);
    expect(state.violations()).toEqual([]);
    // Already waiting, or no wait slot free: it stays where it is.
    expect(state.demote(slow.id)).toBe(false);
    const next = row(2, 11);
    state.launched(next, "send");
    expect(state.demote(next.id)).toBe(false);
    expect([state.sending, state.waiting]).toEqual([1, 1]);
    state.answered(finished(slow));
    expect([state.sending, state.waiting]).toEqual([1, 0]);
    expect(state.violations()).toEqual([]);
  });

  it("names each broken invariant", () => {
    const state = running(2, 1);
    state.launched(row(1, 10), "send");
    state.launched(row(2, 10), "send");
    state.launched(row(3, 11), "send");
    expect(state.violations()).toEqual(
      expect.arrayContaining([
        expect.stringContaining("endpoint 10 has 2 in flight, over its cap 1"),
        expect.stringContaining("outside 0..2"),
      ]),
    );
    const other = running();
    other.unrecorded.add(99);
    expect(other.violations()).toEqual([
      "1 unrecorded but 0 being sent + 0 answered + 0 recording",
    ]);
    const early = new DispatcherState({ concurrency: 1, perEndpointLimit: 1, waitLimit: 0 });
    early.pass = "running";
    expect(early.violations()).toEqual(["work before start"]);
  });
});
