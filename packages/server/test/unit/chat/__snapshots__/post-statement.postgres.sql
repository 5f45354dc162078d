with "room" as (select "deleted_at", "kind", "visibility" from "rooms" where "id" = $1::bigint),
"allowed" as (
  select 1 from "room"
  where "deleted_at" is null
    and ($2::bigint is null or exists (
      select 1 from "room_members" where "room_id" = $1::bigint and "user_id" = $2::bigint))
    and ($9::text is null or exists (
      select 1 from "inbound_webhooks"
      where "id" = $3::bigint and "token_hash" = $9::text and "enabled" = 1))),
"message" as (
  insert into "messages" ("room_id", "sender_user_id", "inbound_webhook_id", "sender_display_name",
    "sender_avatar_url", "content", "content_format", "moderation_status", "created_at",
    "updated_at", "content_text")
  select $1::bigint, $2::bigint, $3::bigint, $4::text, $5::text, $6::text, $7::text, 'none',
    $8::bigint, $8::bigint, $10::text
  from "allowed"
  returning "id", "created_at"),
"emitting" as (select "id" from "message"),
"parley_notify_0" as (select pg_notify($11::text, $12::text || e."id"::text || $13::text) from "emitting" e),
"parley_events" as (
  insert into "webhook_events" ("event", "event_id_prefix", "envelope_prefix",
    "envelope_suffix", "room_id", "message_id", "created_at", "trace_parent", "trace_state")
  select $23::varchar, $19::text, $16::text, $17::text || e."id"::text || $18::text, $22::bigint,
    e."id", $15::bigint, $20::text, $21::text
  from "emitting" e
  where not exists (select 1 from "rooms" r where r."id" = $22::bigint and r."kind" = 'dm')
  returning 1),
"parley_deliveries" as (
  insert into "webhook_deliveries" ("webhook_id", "event", "body", "status", "attempts", "next_attempt_at",
  "locked_until", "locked_by", "last_response_status", "created_at", "updated_at", "event_id",
  "room_id", "message_id", "lane", "trace_parent", "trace_state")
  select w."id", $23::varchar, $16::text || w."id"::text || $17::text || e."id"::text || $18::text, 'PENDING', 0, $15::bigint, null, null, null, $15::bigint, $15::bigint,
    $19::text || lpad(w."id"::text, 10, '0'), $22::bigint, e."id",
    case w."ordering" when 'room' then coalesce($22::bigint, 0) when 'endpoint' then 0 end,
    $20::text, $21::text
  from "emitting" e cross join "webhooks" w
  where w."enabled" = 1
    and (strpos(w."events", $24::text) > 0 or (w."event_prefixes" is not null and exists (
      select 1 from jsonb_array_elements_text(w."event_prefixes"::jsonb) p("value")
      where substr($23::varchar, 1, length(p."value")) = p."value")))
    and (w."room_filter" is null or $14::text is null or strpos(w."room_filter", $14::text) > 0)
    and not exists (select 1 from "rooms" r where r."id" = $22::bigint and r."kind" = 'dm')
  returning 1)
select exists (select 1 from "room" where "deleted_at" is null
    and ("kind" = 'dm' or "visibility" = 'public')) as "room_open",
  (select "id" from "message") as "id", (select "created_at" from "message") as "created_at", (select count(*) from "parley_deliveries") as "queued", (select "id" from "emitting") as "emitted_id", (select count(*) from "parley_notify_0") as "notified"
