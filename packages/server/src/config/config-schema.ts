/**
 * Every setting Parley reads, in one place: environment variable, `parley serve` flag, default and
 * meaning. `loadConfig()` turns these into a typed, validated `Config`; nothing else reads
 * `process.env`.
 */
export type SettingKind =
  "string" | "port" | "int" | "number" | "boolean" | "url" | "proxy-url" | "rate" | "enum" | "json";

export interface Setting {
  readonly env: string;
  readonly flag: string;
  readonly kind: SettingKind;
  readonly default?: string;
  readonly values?: readonly string[];
  readonly description: string;
}

export const SETTINGS = {
  port: {
    env: "PARLEY_PORT",
    flag: "--port",
    kind: "port",
    default: "8080",
    description: "Port to listen on.",
  },
  host: {
    env: "PARLEY_HOST",
    flag: "--host",
    kind: "string",
    default: "127.0.0.1",
    description: "Address to listen on.",
  },
  dataDir: {
    env: "PARLEY_DATA_DIR",
    flag: "--data-dir",
    kind: "string",
    default: "./data",
    description: "SQLite database, uploaded files and generated keys.",
  },
  databaseUrl: {
    env: "DATABASE_URL",
    flag: "--database-url",
    kind: "url",
    description: "postgres://... selects PostgreSQL instead of the embedded SQLite database.",
  },
  databaseTimeoutMs: {
    env: "PARLEY_DATABASE_TIMEOUT_MS",
    flag: "--database-timeout-ms",
    kind: "int",
    default: "2000",
    description:
      "Longest a request waits for the database: for a connection, for a lock another connection holds, for the answer of a server that does not answer. Past it the request answers 503 database_unavailable with Retry-After. PostgreSQL also stops any one statement at nine tenths of it.",
  },
  redisUrl: {
    env: "REDIS_URL",
    flag: "--redis-url",
    kind: "url",
    description: "redis://... shares ingest rate limits between processes.",
  },
  redisKeyPrefix: {
    env: "PARLEY_REDIS_KEY_PREFIX",
    flag: "--redis-key-prefix",
    kind: "string",
    default: "parley:",
    description:
      "Prefix of every Redis key Parley writes (several installations can share one Redis).",
  },
  httpRequestTimeoutMs: {
    env: "PARLEY_HTTP_REQUEST_TIMEOUT_MS",
    flag: "--http-request-timeout-ms",
    kind: "int",
    default: "30000",
    description:
      "Longest a client may take to send a whole request, headers and body; a slower one is disconnected (slow-body clients). Raise it for large uploads over slow links.",
  },
  httpHeadersTimeoutMs: {
    env: "PARLEY_HTTP_HEADERS_TIMEOUT_MS",
    flag: "--http-headers-timeout-ms",
    kind: "int",
    default: "10000",
    description:
      "Longest a client may take to send the request headers (slow-header clients); at most the request time-out.",
  },
  httpKeepAliveTimeoutMs: {
    env: "PARLEY_HTTP_KEEP_ALIVE_TIMEOUT_MS",
    flag: "--http-keep-alive-timeout-ms",
    kind: "int",
    default: "10000",
    description:
      "How long an idle keep-alive connection stays open between requests. Behind a proxy, set it above the proxy's idle time-out.",
  },
  httpMaxConnections: {
    env: "PARLEY_HTTP_MAX_CONNECTIONS",
    flag: "--http-max-connections",
    kind: "int",
    default: "1024",
    description:
      "Open connections this process accepts at once; further ones are closed at once. Keep it below the process's file-descriptor limit.",
  },
  publicBaseUrl: {
    env: "PARLEY_PUBLIC_BASE_URL",
    flag: "--public-base-url",
    kind: "url",
    description: "Public address; used in ingest URLs and moderation links.",
  },
  edition: {
    env: "PARLEY_EDITION",
    flag: "--edition",
    kind: "enum",
    values: ["enterprise", "community"],
    default: "enterprise",
    description: "`community` turns off outbound webhooks, antivirus and AI moderation.",
  },
  jwtSecret: {
    env: "PARLEY_JWT_SECRET",
    flag: "--jwt-secret",
    kind: "string",
    description:
      "HS256 key for tokens the server issues. When unset, one is generated on first start: into the data dir with SQLite, into the database's `server_keys` table with PostgreSQL, so that every process sharing the database uses the same key.",
  },
  jwtJwksUrl: {
    env: "PARLEY_JWT_JWKS_URL",
    flag: "--jwt-jwks-url",
    kind: "url",
    description: "Also accept tokens signed by this identity provider's keys.",
  },
  jwtIssuer: {
    env: "PARLEY_JWT_ISSUER",
    flag: "--jwt-issuer",
    kind: "string",
    description: "Required `iss` of identity-provider tokens.",
  },
  jwtAudience: {
    env: "PARLEY_JWT_AUDIENCE",
    flag: "--jwt-audience",
    kind: "string",
    description: "Required `aud` of identity-provider tokens.",
  },
  secretKey: {
    env: "PARLEY_SECRET_KEY",
    flag: "--secret-key",
    kind: "string",
    description:
      "Key that encrypts webhook secrets at rest (64 hex digits). When unset, one is generated on first start: into the data dir with SQLite, into the database's `server_keys` table with PostgreSQL, so that every process sharing the database uses the same key.",
  },
  masterKey: {
    env: "PARLEY_MASTER_KEY",
    flag: "--master-key",
    kind: "string",
    description:
      "32 bytes (64 hex digits or base64) that wrap the generated keys where they are stored. Required with PostgreSQL unless PARLEY_JWT_SECRET and PARLEY_SECRET_KEY are set or PARLEY_INSECURE_KEYS_IN_DATABASE=true. Keep it outside the database and its backups.",
  },
  masterKeyFile: {
    env: "PARLEY_MASTER_KEY_FILE",
    flag: "--master-key-file",
    kind: "string",
    description: "File holding the master key (a mounted secret), instead of PARLEY_MASTER_KEY.",
  },
  insecureKeysInDatabase: {
    env: "PARLEY_INSECURE_KEYS_IN_DATABASE",
    flag: "--insecure-keys-in-database",
    kind: "boolean",
    default: "false",
    description:
      "With PostgreSQL and no master key, keep generated keys in plain text in the database, beside the secrets they protect (anyone who reads the database or a backup can forge tokens and read webhook secrets).",
  },
  webhookTimeoutMs: {
    env: "PARLEY_WEBHOOK_TIMEOUT_MS",
    flag: "--webhook-timeout-ms",
    kind: "int",
    default: "30000",
    description: "Receiver response time-out.",
  },
  webhookMaxAttempts: {
    env: "PARLEY_WEBHOOK_MAX_ATTEMPTS",
    flag: "--webhook-max-attempts",
    kind: "int",
    default: "5",
    description: "Total attempts before EXHAUSTED.",
  },
  webhookBackoffBaseMs: {
    env: "PARLEY_WEBHOOK_BACKOFF_BASE_MS",
    flag: "--webhook-backoff-base-ms",
    kind: "int",
    default: "30000",
    description: "Delay before the second attempt; doubles each retry.",
  },
  webhookBackoffMaxMs: {
    env: "PARLEY_WEBHOOK_BACKOFF_MAX_MS",
    flag: "--webhook-backoff-max-ms",
    kind: "int",
    default: "3600000",
    description: "Ceiling of the retry delay.",
  },
  webhookSweepIntervalMs: {
    env: "PARLEY_WEBHOOK_SWEEP_INTERVAL_MS",
    flag: "--webhook-sweep-interval-ms",
    kind: "int",
    default: "60000",
    description: "Retry sweep interval.",
  },
  webhookConcurrency: {
    env: "PARLEY_WEBHOOK_CONCURRENCY",
    flag: "--webhook-concurrency",
    kind: "int",
    default: "64",
    description:
      "Send slots: deliveries being sent at once per process to endpoints that answer (see PARLEY_WEBHOOK_WAIT_SLOTS).",
  },
  webhookWaitSlots: {
    env: "PARLEY_WEBHOOK_WAIT_SLOTS",
    flag: "--webhook-wait-slots",
    kind: "int",
    default: "256",
    description:
      "Wait slots: further deliveries in flight per process, for endpoints not known to answer (new, or whose last attempt timed out or could not connect) and for sends slower than 250 ms, so hanging receivers never hold the send slots. 0 puts every send in a send slot.",
  },
  webhookSendThreads: {
    env: "PARLEY_WEBHOOK_SEND_THREADS",
    flag: "--webhook-send-threads",
    kind: "int",
    description:
      "Worker threads that make the webhook attempts (the HTTP exchange and the response capture), leaving the main thread to claim, record and serve the API. Default: the machine's cores less one from 3 cores up; on 2 cores 1 with SQLite and 0 with PostgreSQL; 0 on 1 core. 0 sends on the main thread.",
  },
  webhookPerEndpointConcurrency: {
    env: "PARLEY_WEBHOOK_PER_ENDPOINT_CONCURRENCY",
    flag: "--webhook-per-endpoint-concurrency",
    kind: "int",
    default: "16",
    description:
      "Deliveries in flight at once to one endpoint, per process: the most its window grows to (it starts at 1 and widens by one per answer).",
  },
  webhookAutoDisableAfterMs: {
    env: "PARLEY_WEBHOOK_AUTO_DISABLE_AFTER_MS",
    flag: "--webhook-auto-disable-after-ms",
    kind: "int",
    default: "432000000",
    description:
      "Disable an endpoint whose run of failed attempts started longer ago than this (five days); 0 turns the rule off.",
  },
  webhookAutoDisableMinFailures: {
    env: "PARLEY_WEBHOOK_AUTO_DISABLE_MIN_FAILURES",
    flag: "--webhook-auto-disable-min-failures",
    kind: "int",
    default: "20",
    description:
      "...and which has at least this many failed attempts in a row; 0 turns the rule off.",
  },
  deliveryRetentionDays: {
    env: "PARLEY_DELIVERY_RETENTION_DAYS",
    flag: "--delivery-retention-days",
    kind: "int",
    default: "30",
    description: "Delivery log retention (daily job).",
  },
  webhookAllowHttp: {
    env: "PARLEY_WEBHOOK_ALLOW_HTTP",
    flag: "--webhook-allow-http",
    kind: "boolean",
    default: "false",
    description: "Accept http:// receiver URLs (development).",
  },
  webhookAllowPrivateNetworks: {
    env: "PARLEY_WEBHOOK_ALLOW_PRIVATE_NETWORKS",
    flag: "--webhook-allow-private-networks",
    kind: "boolean",
    default: "false",
    description: "Allow loopback and private receiver addresses (development, tests).",
  },
  webhookVerifyOwnership: {
    env: "PARLEY_WEBHOOK_VERIFY_OWNERSHIP",
    flag: "--webhook-verify-ownership",
    kind: "boolean",
    default: "false",
    description:
      "Ownership check: a new endpoint, or one whose url changes, gets nothing until it answers a WEBHOOK_VERIFICATION challenge.",
  },
  webhookCaFile: {
    env: "PARLEY_WEBHOOK_CA_FILE",
    flag: "--webhook-ca-file",
    kind: "string",
    description: "Extra CA certificates (PEM) trusted for receivers.",
  },
  webhookProxyUrl: {
    env: "PARLEY_WEBHOOK_PROXY_URL",
    flag: "--webhook-proxy-url",
    kind: "proxy-url",
    description:
      "http://[user:password@]host:port of an HTTP proxy: deliveries and OAuth token requests go through it by CONNECT, to the address the receiver's host name was checked to resolve to.",
  },
  rateLimitWebhookIngest: {
    env: "PARLEY_RATE_LIMIT_WEBHOOK_INGEST",
    flag: "--rate-limit-webhook-ingest",
    kind: "rate",
    default: "60/1m",
    description: "The webhook_ingest policy: requests per window per token (N/30s, N/1m, N/1h).",
  },
  rateLimitLoginUsername: {
    env: "PARLEY_RATE_LIMIT_LOGIN_USERNAME",
    flag: "--rate-limit-login-username",
    kind: "rate",
    default: "5/1m",
    description:
      "Failed sign-ins per username over a sliding window (N/30s, N/1m, N/1h); past it, 429 with Retry-After.",
  },
  rateLimitLoginAddress: {
    env: "PARLEY_RATE_LIMIT_LOGIN_ADDRESS",
    flag: "--rate-limit-login-address",
    kind: "rate",
    default: "20/1m",
    description:
      "Failed sign-ins per client address over a sliding window (N/30s, N/1m, N/1h); past it, 429 with Retry-After.",
  },
  oidcIssuer: {
    env: "PARLEY_OIDC_ISSUER",
    flag: "--oidc-issuer",
    kind: "url",
    description:
      "Single sign-on: the OpenID Connect issuer (its /.well-known/openid-configuration is read at the first sign-on). With the client id and secret, the sign-in pages offer it.",
  },
  oidcClientId: {
    env: "PARLEY_OIDC_CLIENT_ID",
    flag: "--oidc-client-id",
    kind: "string",
    description: "Single sign-on: Parley's client id at the issuer.",
  },
  oidcClientSecret: {
    env: "PARLEY_OIDC_CLIENT_SECRET",
    flag: "--oidc-client-secret",
    kind: "string",
    description: "Single sign-on: Parley's client secret at the issuer.",
  },
  oidcName: {
    env: "PARLEY_OIDC_NAME",
    flag: "--oidc-name",
    kind: "string",
    default: "SSO",
    description: 'Single sign-on: the name on the button ("Sign in with <name>").',
  },
  oidcAllowSignup: {
    env: "PARLEY_OIDC_ALLOW_SIGNUP",
    flag: "--oidc-allow-signup",
    kind: "boolean",
    default: "false",
    description:
      "Single sign-on: create a user (role user) at the first sign-in of an account no user is linked to; otherwise it is refused (403 signup_disabled).",
  },
  maxUploadBytes: {
    env: "PARLEY_MAX_UPLOAD_BYTES",
    flag: "--max-upload-bytes",
    kind: "int",
    default: "26214400",
    description: "File upload limit.",
  },
  filesS3Bucket: {
    env: "PARLEY_FILES_S3_BUCKET",
    flag: "--files-s3-bucket",
    kind: "string",
    description:
      "Keep uploaded files in this S3-compatible bucket instead of the data directory, so that every process sharing PostgreSQL serves every upload.",
  },
  filesS3Endpoint: {
    env: "PARLEY_FILES_S3_ENDPOINT",
    flag: "--files-s3-endpoint",
    kind: "url",
    description:
      "Address of an S3-compatible service (MinIO, Ceph, R2...); unset: AWS S3 in PARLEY_FILES_S3_REGION.",
  },
  filesS3Region: {
    env: "PARLEY_FILES_S3_REGION",
    flag: "--files-s3-region",
    kind: "string",
    default: "us-east-1",
    description: "Region of the bucket (signs the requests).",
  },
  filesS3AccessKeyId: {
    env: "PARLEY_FILES_S3_ACCESS_KEY_ID",
    flag: "--files-s3-access-key-id",
    kind: "string",
    description:
      "Access key of the bucket, with PARLEY_FILES_S3_SECRET_ACCESS_KEY; unset: the AWS SDK's default credentials (environment, shared profile, instance role).",
  },
  filesS3SecretAccessKey: {
    env: "PARLEY_FILES_S3_SECRET_ACCESS_KEY",
    flag: "--files-s3-secret-access-key",
    kind: "string",
    description: "Secret of PARLEY_FILES_S3_ACCESS_KEY_ID.",
  },
  filesS3ForcePathStyle: {
    env: "PARLEY_FILES_S3_FORCE_PATH_STYLE",
    flag: "--files-s3-force-path-style",
    kind: "boolean",
    default: "false",
    description:
      "Address objects as <endpoint>/<bucket>/<key> rather than <bucket>.<endpoint>/<key> (most self-hosted services need it).",
  },
  dlpPolicyFile: {
    env: "PARLEY_DLP_POLICY_FILE",
    flag: "--dlp-policy-file",
    kind: "string",
    description: "JSON file adding DLP rules or turning built-in ones off.",
  },
  avBlocklistFile: {
    env: "PARLEY_AV_BLOCKLIST_FILE",
    flag: "--av-blocklist-file",
    kind: "string",
    description: "SHA-256 block list for the built-in antivirus engine.",
  },
  clamavUrl: {
    env: "PARLEY_CLAMAV_URL",
    flag: "--clamav-url",
    kind: "url",
    description: "tcp://host:3310 scans uploads with ClamAV instead of the built-in engine.",
  },
  moderationProvider: {
    env: "PARLEY_MODERATION_PROVIDER",
    flag: "--moderation-provider",
    kind: "enum",
    values: ["local", "http", "off"],
    default: "local",
    description: "AI moderation classifier.",
  },
  moderationUrl: {
    env: "PARLEY_MODERATION_URL",
    flag: "--moderation-url",
    kind: "url",
    description: "Moderation API URL (provider http).",
  },
  moderationApiKey: {
    env: "PARLEY_MODERATION_API_KEY",
    flag: "--moderation-api-key",
    kind: "string",
    description: "Bearer key for the moderation API.",
  },
  moderationFlagThreshold: {
    env: "PARLEY_MODERATION_FLAG_THRESHOLD",
    flag: "--moderation-flag-threshold",
    kind: "number",
    default: "0.5",
    description: "Score at which a message is flagged for review.",
  },
  moderationQuarantineThreshold: {
    env: "PARLEY_MODERATION_QUARANTINE_THRESHOLD",
    flag: "--moderation-quarantine-threshold",
    kind: "number",
    default: "0.85",
    description: "Score at which a message is hidden pending review.",
  },
  iceServers: {
    env: "PARLEY_ICE_SERVERS",
    flag: "--ice-servers",
    kind: "json",
    default: "[]",
    description:
      'ICE servers for calls: a JSON array of RTCIceServer objects, e.g. [{"urls":"stun:stun.example.org:3478"}]. Empty: peers on one network only. A username and credential given here are not handed out unless PARLEY_ICE_SERVERS_STATIC_CREDENTIALS=true: use PARLEY_TURN_SECRET instead.',
  },
  iceServersStaticCredentials: {
    env: "PARLEY_ICE_SERVERS_STATIC_CREDENTIALS",
    flag: "--ice-servers-static-credentials",
    kind: "boolean",
    default: "false",
    description:
      "Hand the static TURN usernames and credentials of PARLEY_ICE_SERVERS to every user who reads a call (bots excepted); they keep working after the user is disabled. Off: those TURN entries are left out (or served with PARLEY_TURN_SECRET's short-lived credentials).",
  },
  turnSecret: {
    env: "PARLEY_TURN_SECRET",
    flag: "--turn-secret",
    kind: "string",
    description:
      "Shared secret of the TURN server's REST API credentials (coturn: use-auth-secret, static-auth-secret): each user reading a call gets a credential of their own that expires after PARLEY_TURN_TTL; bots get none. At least 32 characters.",
  },
  turnUrls: {
    env: "PARLEY_TURN_URLS",
    flag: "--turn-urls",
    kind: "string",
    description:
      "Comma-separated turn: or turns: URLs the PARLEY_TURN_SECRET credentials are for. Unset: the turn: and turns: URLs of PARLEY_ICE_SERVERS.",
  },
  turnTtl: {
    env: "PARLEY_TURN_TTL",
    flag: "--turn-ttl",
    kind: "string",
    default: "1h",
    description:
      "How long a PARLEY_TURN_SECRET credential stays valid: seconds, or a number with s, m or h (60s to 168h).",
  },
  presenceGraceMs: {
    env: "PARLEY_PRESENCE_GRACE_MS",
    flag: "--presence-grace-ms",
    kind: "int",
    default: "15000",
    description:
      "A user stops being present in a room (USER_LEFT_ROOM via presence) this long after their last live connection to it went away.",
  },
  presenceHeartbeatMs: {
    env: "PARLEY_PRESENCE_HEARTBEAT_MS",
    flag: "--presence-heartbeat-ms",
    kind: "int",
    default: "5000",
    description:
      "How often a process renews its presence rows; a process silent for three heartbeats is taken for dead and its connections' presence ends.",
  },
  streamPingIntervalMs: {
    env: "PARLEY_STREAM_PING_INTERVAL_MS",
    flag: "--stream-ping-interval-ms",
    kind: "int",
    default: "25000",
    description:
      "The live stream pings idle sockets this often and drops one that has not answered the previous ping.",
  },
  streamReauthenticateMs: {
    env: "PARLEY_STREAM_REAUTHENTICATE_MS",
    flag: "--stream-reauthenticate-ms",
    kind: "int",
    default: "30000",
    description:
      "How often the live stream checks again the token each open connection authenticated with: a connection whose token was revoked or expired, or whose user was disabled, deleted or changed role since, is closed with 4401.",
  },
  streamCoalesceMs: {
    env: "PARLEY_STREAM_COALESCE_MS",
    flag: "--stream-coalesce-ms",
    kind: "int",
    default: "50",
    description:
      "The longest the live stream waits, after writing to its clients, before it writes again (it waits three times as long as the last write round took, so a stream with few clients does not wait); frames queued meanwhile share one write per client. 0: never wait.",
  },
  streamMaxSockets: {
    env: "PARLEY_STREAM_MAX_SOCKETS",
    flag: "--stream-max-sockets",
    kind: "int",
    default: "1024",
    description:
      "Live-stream sockets this process holds at once, a budget of their own beside PARLEY_HTTP_MAX_CONNECTIONS (which then counts plain HTTP connections only, so a full stream never keeps requests out). Past it an upgrade is answered 503 service_unavailable. Keep both together below the process's file-descriptor limit.",
  },
  streamMaxSocketsPerAddress: {
    env: "PARLEY_STREAM_MAX_SOCKETS_PER_ADDRESS",
    flag: "--stream-max-sockets-per-address",
    kind: "int",
    default: "50",
    description:
      "Live-stream sockets this process holds for one client address (an IPv6 /64 counts as one), authenticated or not. Past it an upgrade is answered 429 rate_limited. Behind a reverse proxy every client has the proxy's address: raise it to PARLEY_STREAM_MAX_SOCKETS there. 0: no limit per address.",
  },
  streamMaxSocketsPerUser: {
    env: "PARLEY_STREAM_MAX_SOCKETS_PER_USER",
    flag: "--stream-max-sockets-per-user",
    kind: "int",
    default: "20",
    description:
      "Authenticated live-stream sockets this process holds for one user or bot; the socket that authenticates past it is closed with 4429.",
  },
  streamFramesPerSecond: {
    env: "PARLEY_STREAM_FRAMES_PER_SECOND",
    flag: "--stream-frames-per-second",
    kind: "int",
    default: "50",
    description:
      "Frames a live-stream socket may send per second on average (a token bucket refilled at this rate, holding PARLEY_STREAM_FRAME_BURST); a socket sending past it is closed with 1008.",
  },
  streamFrameBurst: {
    env: "PARLEY_STREAM_FRAME_BURST",
    flag: "--stream-frame-burst",
    kind: "int",
    default: "200",
    description:
      "Frames a live-stream socket may send at once before PARLEY_STREAM_FRAMES_PER_SECOND applies: the chat page subscribes to every room of its user when it connects, so keep it above the number of rooms a user is in.",
  },
  metricsToken: {
    env: "PARLEY_METRICS_TOKEN",
    flag: "--metrics-token",
    kind: "string",
    description:
      "Bearer token /metrics requires (Authorization: Bearer <it>), at least 16 characters. Unset: /metrics answers anyone who reaches the port (counts only, no content).",
  },
  logLevel: {
    env: "PARLEY_LOG_LEVEL",
    flag: "--log-level",
    kind: "enum",
    values: ["fatal", "error", "warn", "info", "debug", "trace", "silent"],
    default: "info",
    description:
      "Log level. Each request is logged at debug (its start and its answer); errors and warnings always.",
  },
  logFormat: {
    env: "PARLEY_LOG_FORMAT",
    flag: "--log-format",
    kind: "enum",
    values: ["auto", "pretty", "json"],
    default: "auto",
    description:
      "How log lines look: pretty (one readable, coloured line each), json (one JSON object per line, for a log collector), or auto: pretty when standard output is a terminal, json otherwise.",
  },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;
