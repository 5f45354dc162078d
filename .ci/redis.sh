# shellcheck shell=bash
# Makes Redis reachable on 127.0.0.1:6379 for the shared rate-limit tests. Sourced by .ci/run.

redis_ready() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

ensure_redis() {
  if ! redis_ready; then
    command -v redis-server >/dev/null 2>&1 || apt_install redis-server
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
      --dir /tmp --logfile /tmp/parley-ci-redis.log
    for _ in $(seq 1 30); do redis_ready && break; sleep 1; done
  fi
  redis_ready || { echo "Redis did not start" >&2; return 1; }
  PARLEY_TEST_REDIS_URL="redis://127.0.0.1:6379"
}
