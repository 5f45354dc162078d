import { expect, it } from "vitest";
import type { TestUser } from "../../helpers/build-app.js";
import { describeEachDialect } from "../../helpers/dialects.js";
import { listeningApp } from "../../helpers/listening-app.js";
import type { Frame, StreamSocket } from "../../helpers/stream-socket.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describeEachDialect("room_added frames on $name", (dialect) => {
  const server = listeningApp(dialect);
  let counter = 0;

  async function call(user: TestUser, method: string, url: string, payload?: object) {
    const res = await server.t.app.inject({
      method: method as "GET",
      url,
      headers: user.headers,
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: (res.body ? res.json() : undefined) as Json };
  }

  async function people() {
    const n = ++counter;
    const [alice, bob, carol] = await Promise.all(
      ["alice", "bob", "carol"].map((name) => server.t.user("user", `${name}${n}-${dialect.name}`)),
    );
    return { alice: alice!, bob: bob!, carol: carol! };
  }

  const isAdded = (frame: Frame) => frame.type === "room_added";

  /** Every frame the socket got up to now: a ping answered after whatever was sent before it. */
  async function settled(socket: StreamSocket): Promise<Frame[]> {
    socket.send({ type: "ping" });
    await socket.next((frame) => frame.type === "pong");
    return socket.frames.filter(isAdded);
  }

  it("tells both members' connections of a DM opened now, and no one else; an open DM asked again tells nobody", async () => {
    const { alice, bob, carol } = await people();
    const bobsTab = await server.open(bob);
    const bobsOtherTab = await server.open(bob);
    const alicesOtherTab = await server.open(alice);
    const outsider = await server.open(carol);
    const opened = await call(alice, "POST", "/api/dms", { username: bob.username });
    expect(opened.status).toBe(201);
    const expected = { type: "room_added", roomId: opened.body.id, kind: "dm", by: alice.username };
    expect(await bobsTab.next(isAdded)).toEqual(expected);
    expect(await bobsOtherTab.next(isAdded)).toEqual(expected);
    expect(await alicesOtherTab.next(isAdded)).toEqual(expected);
    // The frame names a DM bob may read and subscribe to.
    expect((await call(bob, "GET", `/api/rooms/${opened.body.id}`)).body).toMatchObject({
      kind: "dm",
      peer: { username: alice.username },
    });

    // Asked again (by either of them): the same DM, nothing announced.
    expect((await call(bob, "POST", "/api/dms", { userId: alice.id })).status).toBe(200);
    expect((await call(alice, "POST", "/api/dms", { username: bob.username })).status).toBe(200);
    expect(await settled(bobsTab)).toHaveLength(1);
    expect(await settled(alicesOtherTab)).toHaveLength(1);
    expect(await settled(outsider)).toEqual([]);
  });

  it("tells a user added to a private room, once, and not the room's other members or outsiders", async () => {
    const { alice, bob, carol } = await people();
    const room = await call(alice, "POST", "/api/rooms", { name: "secret", visibility: "private" });
    expect(room.status).toBe(201);
    const added = await server.open(bob);
    const adder = await server.open(alice);
    const outsider = await server.open(carol);
    expect(
      (await call(alice, "POST", `/api/rooms/${room.body.id}/members`, { userId: bob.id })).status,
    ).toBe(200);
    expect(await added.next(isAdded)).toEqual({
      type: "room_added",
      roomId: room.body.id,
      kind: "room",
      by: alice.username,
    });
    // Refused adds announce nothing.
    expect(
      (await call(alice, "POST", `/api/rooms/${room.body.id}/members`, { userId: bob.id })).status,
    ).toBe(409);
    expect(
      (await call(carol, "POST", `/api/rooms/${room.body.id}/members`, { userId: carol.id }))
        .status,
    ).toBe(404);
    expect(await settled(added)).toHaveLength(1);
    expect(await settled(adder)).toEqual([]);
    expect(await settled(outsider)).toEqual([]);
  });
});
