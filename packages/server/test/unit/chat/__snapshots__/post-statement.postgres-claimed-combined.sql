with "input" as (select * from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::text[], $14::bigint[], $15::bigint[], $16::integer[], $17::text[], $18::text[], $19::text[]) with ordinality as i("room_id", "sender_user_id", "inbound_webhook_id", "sender_display_name", "sender_avatar_url", "content", "content_format", "created_at", "token_hash", "content_text", "claim_webhook_id", "claim_key_hash", "claim_body_hash", "claim_at", "claim_expires_at", "answer_status", "answer_headers", "answer_prefix", "answer_suffix", "ord")),
"checked" as (
  select i."ord", (r."id" is not null and r."deleted_at" is null
      and (r."kind" = 'dm' or r."visibility" = 'public')) as "room_open",
    (r."id" is not null and r."deleted_at" is null
      and (i."sender_user_id" is null or exists (
        select 1 from "room_members" m
        where m."room_id" = i."room_id" and m."user_id" = i."sender_user_id"))
      and (i."token_hash" is null or exists (
        select 1 from "inbound_webhooks" w
        where w."id" = i."inbound_webhook_id" and w."token_hash" = i."token_hash"
          and w."enabled" = 1))) as "allowed"
  from "input" i left join "rooms" r on r."id" = i."room_id"),
"ids" as (
  select c."ord", nextval('"messages_id_seq"') as "id" from "checked" c
  where c."allowed" order by c."ord"),
"claimants" as (
  select distinct on (i."claim_webhook_id", i."claim_key_hash") d."ord", d."id", i."claim_webhook_id",
    i."claim_key_hash", i."claim_body_hash", i."claim_at", i."claim_expires_at", i."answer_status",
    i."answer_headers", i."answer_prefix" || d."id"::text || i."answer_suffix" as "answer_body"
  from "ids" d join "input" i on i."ord" = d."ord"
  order by i."claim_webhook_id", i."claim_key_hash", d."ord"),
"claimed" as (
  insert into "inbound_idempotency_keys" ("inbound_webhook_id", "key_hash", "body_hash", "claimed_at", "expires_at",
    "status", "answer_headers", "answer_body")
  select c."claim_webhook_id", c."claim_key_hash", c."claim_body_hash", c."claim_at",
    c."claim_expires_at", c."answer_status", c."answer_headers", c."answer_body"
  from "claimants" c
  order by c."claim_webhook_id", c."claim_key_hash"
  on conflict ("inbound_webhook_id", "key_hash") do update set
    "body_hash" = excluded."body_hash", "claimed_at" = excluded."claimed_at",
    "expires_at" = excluded."expires_at", "status" = excluded."status",
    "answer_headers" = excluded."answer_headers", "answer_body" = excluded."answer_body"
  where "inbound_idempotency_keys"."expires_at" <= excluded."claimed_at"
    or ("inbound_idempotency_keys"."status" is null and "inbound_idempotency_keys"."claimed_at" < excluded."claimed_at" - 120000)
  returning "inbound_webhook_id", "key_hash"),
"won" as (
  select c."ord", c."id" from "claimants" c
  join "claimed" k on k."inbound_webhook_id" = c."claim_webhook_id" and k."key_hash" = c."claim_key_hash"),
"message" as (
  insert into "messages" ("id", "room_id", "sender_user_id", "inbound_webhook_id",
    "sender_display_name", "sender_avatar_url", "content", "content_format", "moderation_status",
    "created_at", "updated_at", "content_text")
  select w."id", i."room_id", i."sender_user_id", i."inbound_webhook_id", i."sender_display_name",
    i."sender_avatar_url", i."content", i."content_format", 'none', i."created_at", i."created_at",
    i."content_text"
  from "won" w join "input" i on i."ord" = w."ord"
  returning "id", "created_at"),
"emitting" as (select "ord", "id" from "won"),
"parley_emit_input" as (select * from unnest($20::text[], $21::text[], $22::text[], $23::text[], $24::bigint[], $25::text[], $26::text[], $27::text[], $28::text[], $29::text[], $30::text[], $31::bigint[], $32::varchar[], $33::text[]) with ordinality as x("p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10", "p11", "p12", "p13", "ord")),
"parley_notify_0" as (select pg_notify(x."p0", x."p1" || e."id"::text || x."p2") from "emitting" e join "parley_emit_input" x on x."ord" = e."ord" order by e."id"),
"parley_events" as (
  insert into "webhook_events" ("event", "event_id_prefix", "envelope_prefix",
    "envelope_suffix", "room_id", "message_id", "created_at", "trace_parent", "trace_state")
  select x."p12", x."p8", x."p5", x."p6" || e."id"::text || x."p7", x."p11",
    e."id", x."p4", x."p9", x."p10"
  from "emitting" e join "parley_emit_input" x on x."ord" = e."ord"
  where not exists (select 1 from "rooms" r where r."id" = x."p11" and r."kind" = 'dm')
  returning 1),
"parley_deliveries" as (
  insert into "webhook_deliveries" ("webhook_id", "event", "body", "status", "attempts", "next_attempt_at",
  "locked_until", "locked_by", "last_response_status", "created_at", "updated_at", "event_id",
  "room_id", "message_id", "lane", "trace_parent", "trace_state")
  select w."id", x."p12", x."p5" || w."id"::text || x."p6" || e."id"::text || x."p7", 'PENDING', 0, x."p4", null, null, null, x."p4", x."p4",
    x."p8" || lpad(w."id"::text, 10, '0'), x."p11", e."id",
    case w."ordering" when 'room' then coalesce(x."p11", 0) when 'endpoint' then 0 end,
    x."p9", x."p10"
  from "emitting" e join "parley_emit_input" x on x."ord" = e."ord" cross join "webhooks" w
  where w."enabled" = 1
    and (strpos(w."events", x."p13") > 0 or (w."event_prefixes" is not null and exists (
      select 1 from jsonb_array_elements_text(w."event_prefixes"::jsonb) p("value")
      where substr(x."p12", 1, length(p."value")) = p."value")))
    and (w."room_filter" is null or x."p3" is null or strpos(w."room_filter", x."p3") > 0)
    and not exists (select 1 from "rooms" r where r."id" = x."p11" and r."kind" = 'dm')
  returning 1)
select a.*, case when a."ord" = (select max("ord") from "emitting") then (select count(*) from "parley_deliveries") else 0 end as "queued", e."id" as "emitted_id", (select count(*) from "parley_notify_0") as "notified"
from (select c."ord", c."room_open", m."id", m."created_at",
    (c."allowed" and w."ord" is null) as "claim_lost"
  from "checked" c left join "won" w on w."ord" = c."ord" left join "message" m on m."id" = w."id") a left join "emitting" e on e."ord" = a."ord"
order by a."ord"
