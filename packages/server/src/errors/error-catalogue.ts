/**
 * Every error code Parley answers with, its HTTP status and its title. `docs/errors.md` lists the
 * same codes; a test keeps the two in step. Codes are stable: clients may branch on them.
 */
export const ERROR_CATALOGUE = {
  // 400
  validation_failed: { status: 400, title: "The request does not match the schema" },
  unknown_field: { status: 400, title: "The request has a field this endpoint does not accept" },
  invalid_json: { status: 400, title: "The body is not valid JSON" },
  invalid_cursor: { status: 400, title: "The cursor is not one this list handed out" },
  invalid_name: { status: 400, title: "The name is empty or longer than 200 characters" },
  invalid_topic: { status: 400, title: "A room topic is at most 500 characters" },
  invalid_url: { status: 400, title: "The URL is not an absolute URL" },
  url_scheme_not_allowed: { status: 400, title: "The URL must use https" },
  url_host_not_allowed: {
    status: 400,
    title: "The URL points at a loopback, private or otherwise refused address",
  },
  invalid_secret: {
    status: 400,
    title:
      "The secret must be 16 to 1024 characters; a whsec_ one, strict base64 of a 24 to 64 byte key",
  },
  invalid_events: {
    status: 400,
    title: "Events must be a non-empty list of known event names without duplicates",
  },
  invalid_room_ids: { status: 400, title: "roomIds must be null or a non-empty list of room ids" },
  invalid_header: {
    status: 400,
    title: "A header must be a token name with a printable value of at most 1024 bytes",
  },
  header_reserved: {
    status: 400,
    title: "This header is set by Parley or by HTTP itself, or is a proxy or browser credential",
  },
  invalid_auth: {
    status: 400,
    title:
      "auth must be basic {username, password}, bearer {token} or oauth2 {tokenUrl, clientId, clientSecret, scope?, audience?}",
  },
  invalid_tls: {
    status: 400,
    title: "tls must hold a valid PEM certificate and the PEM private key that matches it",
  },
  invalid_time_range: { status: 400, title: "since must be before until" },
  content_required: { status: 400, title: "content is required" },
  content_too_large: { status: 400, title: "content is larger than 16384 UTF-8 bytes" },
  invalid_content_format: { status: 400, title: "contentFormat must be markdown or html" },
  body_too_large: { status: 400, title: "The request body is larger than this endpoint accepts" },
  file_required: { status: 400, title: "A multipart field named file is required" },
  cannot_dm_self: { status: 400, title: "A direct message needs another user" },
  content_not_renderable: { status: 400, title: "The content could not be rendered" },
  invalid_thread: {
    status: 400,
    title: "threadId must be a top-level, not deleted message of the same room",
  },
  invalid_emoji: {
    status: 400,
    title: "A reaction is one Unicode emoji or a known shortcode name such as tada",
  },
  too_many_reactions: { status: 400, title: "A message has at most 20 different reactions" },
  invalid_idempotency_key: {
    status: 400,
    title: "Idempotency-Key must be 1 to 255 printable ASCII characters",
  },
  invalid_file: {
    status: 400,
    title:
      "fileIds must name at most 10 different files you uploaded to this room that no message carries yet",
  },
  invalid_query: {
    status: 400,
    title: "q must have 1 to 16 words (letters or digits) in at most 200 characters",
  },
  invalid_invite: { status: 400, title: "The invitation is unknown, used or expired" },
  // Any other 4xx from the HTTP layer (a malformed URL, a broken Content-Length), its status kept.
  bad_request: { status: 400, title: "The request is malformed" },
  // 401 / 403
  unauthorized: { status: 401, title: "A valid bearer token is required" },
  invalid_credentials: { status: 401, title: "The username or password is wrong" },
  invalid_signature: {
    status: 401,
    title: "The request's signature is missing or does not match the webhook's signing secret",
  },
  forbidden: { status: 403, title: "Your role does not allow this" },
  csrf_required: {
    status: 403,
    title: "A request signed in by cookie needs the X-Parley-CSRF header",
  },
  signup_disabled: {
    status: 403,
    title: "This single sign-on account has no Parley user, and sign-up is off",
  },
  not_a_member: { status: 403, title: "You are not a member of this room" },
  not_room_creator: { status: 403, title: "Only the room's creator can do this" },
  not_author: { status: 403, title: "Only the message's author can do this" },
  enterprise_required: { status: 403, title: "This feature needs the Enterprise edition" },
  // 404
  not_found: { status: 404, title: "Not found" },
  message_not_found: { status: 404, title: "No such message in this room" },
  file_not_found: { status: 404, title: "No such file in this room" },
  route_not_found: { status: 404, title: "No such route" },
  // 409
  username_taken: { status: 409, title: "That username is taken" },
  already_member: { status: 409, title: "Already a member of this room" },
  already_promoted: { status: 409, title: "This conversation is already a room" },
  dm_members_fixed: {
    status: 409,
    title: "A direct message keeps its two members: promote it to a room to add people",
  },
  flag_already_reviewed: { status: 409, title: "This moderation flag was already reviewed" },
  last_admin: {
    status: 409,
    title: "This is the last enabled admin: it cannot be deleted, disabled or demoted",
  },
  idempotency_key_in_use: {
    status: 409,
    title: "A request with this Idempotency-Key is still being processed; retry shortly",
  },
  // 410
  message_deleted: { status: 410, title: "This message was deleted" },
  // 413 / 415
  file_too_large: { status: 413, title: "The file is larger than the upload limit" },
  unsupported_media_type: { status: 415, title: "This endpoint accepts application/json" },
  // 422
  dlp_blocked: { status: 422, title: "Blocked by the data-loss-prevention policy" },
  file_infected: { status: 422, title: "The antivirus scanner flagged this file" },
  idempotency_key_reused: {
    status: 422,
    title: "This Idempotency-Key was used with a different request body",
  },
  // 429
  rate_limited: { status: 429, title: "Too many requests" },
  // 5xx
  internal_error: { status: 500, title: "Internal server error" },
  antivirus_unavailable: { status: 503, title: "The antivirus scanner is unavailable" },
  database_unavailable: { status: 503, title: "The database is busy or unavailable; retry later" },
  service_unavailable: { status: 503, title: "The service is not ready" },
  insufficient_storage: { status: 507, title: "The disk holding the database is full" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;
