/**
 * The lane of a delivery, as SQL, from its endpoint's `ordering` and the event's room id (both
 * SQL expressions): null without ordering (the delivery is claimed as before, by time), the room
 * id for "room" (0 for an event without a room: those form one lane of their own), 0 for
 * "endpoint" (one lane). Room ids start at 1, so 0 is never a room's lane. Written once, for every
 * statement that queues a delivery: the fan-out, the test event and redelivery, recovery, and the
 * change of an endpoint's ordering (docs/webhooks.md, "Ordered delivery").
 */
export function laneOf(ordering: string, roomId: string): string {
  return `case ${ordering} when 'room' then coalesce(${roomId}, 0) when 'endpoint' then 0 end`;
}
