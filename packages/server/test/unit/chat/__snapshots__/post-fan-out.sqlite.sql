insert into "webhook_deliveries" ("webhook_id", "event", "body", "status", "attempts", "next_attempt_at",
  "locked_until", "locked_by", "last_response_status", "created_at", "updated_at", "event_id",
  "room_id", "message_id", "lane", "trace_parent", "trace_state")
  select w."id", ?, ? || w."id" || ?, 'PENDING', 0, ?, null, null, null, ?, ?,
    ? || printf('%010d', w."id"), ?, ?,
    case w."ordering" when 'room' then coalesce(?, 0) when 'endpoint' then 0 end,
    ?, ?
  from "webhooks" w
  where w."enabled" = 1
    and (instr(w."events", ?) > 0 or (w."event_prefixes" is not null and exists (
      select 1 from json_each(w."event_prefixes") p
      where substr(?, 1, length(p."value")) = p."value")))
    and (w."room_filter" is null or ? is null or instr(w."room_filter", ?) > 0)
    and not exists (select 1 from "rooms" r where r."id" = ? and r."kind" = 'dm')
