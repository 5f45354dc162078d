with "room" as (select "deleted_at", "kind", "visibility" from "rooms" where "id" = $1::bigint),
"allowed" as (
  select 1 from "room"
  where "deleted_at" is null
    and ($2::bigint is null or exists (
      select 1 from "room_members" where "room_id" = $1::bigint and "user_id" = $2::bigint))
    and ($9::text is null or exists (
      select 1 from "inbound_webhooks"
      where "id" = $3::bigint and "token_hash" = $9::text and "enabled" = 1))),
"ids" as (select nextval('"messages_id_seq"') as "id" from "allowed"),
"claimed" as (
  insert into "inbound_idempotency_keys" ("inbound_webhook_id", "key_hash", "body_hash", "claimed_at", "expires_at",
    "status", "answer_headers", "answer_body")
  select $11::bigint, $12::text, $13::text, $14::bigint, $15::bigint,
    $16::integer, $17::text, $18::text || d."id"::text || $19::text
  from "ids" d
  on conflict ("inbound_webhook_id", "key_hash") do update set
    "body_hash" = excluded."body_hash", "claimed_at" = excluded."claimed_at",
    "expires_at" = excluded."expires_at", "status" = excluded."status",
    "answer_headers" = excluded."answer_headers", "answer_body" = excluded."answer_body"
  where "inbound_idempotency_keys"."expires_at" <= excluded."claimed_at"
    or ("inbound_idempotency_keys"."status" is null and "inbound_idempotency_keys"."claimed_at" < excluded."claimed_at" - 120000)
  returning "key_hash"),
"message" as (
  insert into "messages" ("id", "room_id", "sender_user_id", "inbound_webhook_id",
    "sender_display_name", "sender_avatar_url", "content", "content_format", "moderation_status",
    "created_at", "updated_at", "content_text")
  select d."id", $1::bigint, $2::bigint, $3::bigint, $4::text, $5::text, $6::text, $7::text, 'none',
    $8::bigint, $8::bigint, $10::text
  from "ids" d
  where exists (select 1 from "claimed")
  returning "id", "created_at"),
"emitting" as (select "id" from "message"),
"parley_notify_0" as (select pg_notify($20::text, $21::text || e."id"::text || $22::text) from "emitting" e),
"parley_events" as (
  insert into "webhook_events" ("event", "event_id_prefix", "envelope_prefix",
    "envelope_suffix", "room_id", "message_id", "created_at", "trace_parent", "trace_state")
  select $32::varchar, $28::text, $25::text, $26::text || e."id"::text || $27::text, $31::bigint,
    e."id", $24::bigint, $29::text, $30::text
  from "emitting" e
  where not exists (select 1 from "rooms" r where r."id" = $31::bigint and r."kind" = 'dm')
  returning 1),
"parley_deliveries" as (
  insert into "webhook_deliveries" ("webhook_id", "event", "body", "status", "attempts", "next_attempt_at",
  "locked_until", "locked_by", "last_response_status", "created_at", "updated_at", "event_id",
  "room_id", "message_id", "lane", "trace_parent", "trace_state")
  select w."id", $32::varchar, $25::text || w."id"::text || $26::text || e."id"::text || $27::text, 'PENDING', 0, $24::bigint, null, null, null, $24::bigint, $24::bigint,
    $28::text || lpad(w."id"::text, 10, '0'), $31::bigint, e."id",
    case w."ordering" when 'room' then coalesce($31::bigint, 0) when 'endpoint' then 0 end,
    $29::text, $30::text
  from "emitting" e cross join "webhooks" w
  where w."enabled" = 1
    and (strpos(w."events", $33::text) > 0 or (w."event_prefixes" is not null and exists (
      select 1 from jsonb_array_elements_text(w."event_prefixes"::jsonb) p("value")
      where substr($32::varchar, 1, length(p."value")) = p."value")))
    and (w."room_filter" is null or $23::text is null or strpos(w."room_filter", $23::text) > 0)
    and not exists (select 1 from "rooms" r where r."id" = $31::bigint and r."kind" = 'dm')
  returning 1)
select exists (select 1 from "room" where "deleted_at" is null
    and ("kind" = 'dm' or "visibility" = 'public')) as "room_open",
  (select "id" from "message") as "id", (select "created_at" from "message") as "created_at",
  (exists (select 1 from "allowed") and not exists (select 1 from "claimed")) as "claim_lost", (select count(*) from "parley_deliveries") as "queued", (select "id" from "emitting") as "emitted_id", (select count(*) from "parley_notify_0") as "notified"
