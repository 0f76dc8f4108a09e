#!/bin/sh
# stream-group apply step (run by the module's local-exec): create the coordinator
# group if it does not exist, scale the whole stream to SHARD_COUNT through the
# stream-level endpoint, and wait until producer routing shows SHARD_COUNT.
#
# POSIX sh and curl only. Credentials go to curl through a config on stdin
# (-K -), never on its command line, so they do not show in `ps`. The password is
# never printed. 429, 503 (but not a failed provisioning) and 409
# STATE_VERSION_CONFLICT are retried with the same X-Request-Id; every other
# error fails the apply with the coordinator's errorCode (unlike upstream, a 409
# other than GROUP_ALREADY_EXISTS on create is an error, not "exists").
#
# Routing flips to the new count as soon as the migration is ACTIVE, long before
# it completes (docs/coordinator.md §2); shardgate waits for "complete and safe".
set -eu

log() { printf 'stream-group: %s\n' "$*"; }
fail() {
	printf 'stream-group: error: %s\n' "$*" >&2
	exit 1
}

base=${COORDINATOR_BASE_URL:-}
prefix=${STREAM_PREFIX:-}
group=${CONSUMER_GROUP:-}
count=${SHARD_COUNT:-}
requested_by=${REQUESTED_BY:-terraform}
reason=${REASON:-terraform apply}
rid_prefix=${REQUEST_ID_PREFIX:-terraform}
timeout=${TIMEOUT_SECONDS:-120}
interval=${POLL_INTERVAL_SECONDS:-2}

[ -n "$base" ] || fail "COORDINATOR_BASE_URL is not set"
[ -n "$prefix" ] || fail "STREAM_PREFIX is not set"
[ -n "$group" ] || fail "CONSUMER_GROUP is not set"
is_uint() { case "$1" in '' | *[!0-9]*) return 1 ;; esac; }
is_uint "$count" && [ "$count" -ge 1 ] || fail "SHARD_COUNT must be a positive integer, got '$count'"
is_uint "$timeout" || fail "TIMEOUT_SECONDS must be a whole number, got '$timeout'"
is_uint "$interval" && [ "$interval" -ge 1 ] || fail "POLL_INTERVAL_SECONDS must be a positive integer, got '$interval'"
# Names go into URL paths unescaped; refuse what would need escaping.
for name in "$prefix" "$group"; do
	case "$name" in *[!A-Za-z0-9._:~@-]*) fail "stream prefix and group may only use A-Z a-z 0-9 . _ : ~ @ -, got '$name'" ;; esac
done

base=${base%/}
case "$base" in */coord/v1) ;; *) base="$base/coord/v1" ;; esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

json_string() { printf '%s' "$1" | tr '\n\r\t' '   ' | sed 's/\\/\\\\/g; s/"/\\"/g'; }
curl_quote() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
json_field() { sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p" "$work/body" | head -n 1; }
json_number() { sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\\([0-9][0-9]*\\).*/\\1/p" "$work/body" | head -n 1; }

# curl_config prints curl's config: only the credentials, and only when set.
curl_config() {
	if [ -n "${COORDINATOR_USERNAME:-}" ] || [ -n "${COORDINATOR_PASSWORD:-}" ]; then
		printf 'user = "%s:%s"\n' "$(curl_quote "${COORDINATOR_USERNAME:-}")" "$(curl_quote "${COORDINATOR_PASSWORD:-}")"
	fi
}

# call METHOD PATH STEP [BODY]: one logical request, retried on 429/503/409
# STATE_VERSION_CONFLICT (and transport errors on GET) with the same request id.
# Sets status, code (errorCode) and rid; the body is in $work/body.
call() {
	method=$1 path=$2 step=$3 body=${4:-}
	rid="$rid_prefix-$step-$(date +%s)-$prefix-$group-$count"
	attempt=1
	while :; do
		if [ -n "$body" ]; then
			status=$(curl_config | curl -sS -K - -X "$method" -o "$work/body" -D "$work/headers" -w '%{http_code}' \
				-A 'shardgate-stream-group/1' -H 'Accept: application/json' -H "X-Request-Id: $rid" \
				-H 'Content-Type: application/json' --data-binary "$body" "$base$path") || status=000
		else
			status=$(curl_config | curl -sS -K - -X "$method" -o "$work/body" -D "$work/headers" -w '%{http_code}' \
				-A 'shardgate-stream-group/1' -H 'Accept: application/json' -H "X-Request-Id: $rid" \
				"$base$path") || status=000
		fi
		[ -f "$work/body" ] || : >"$work/body"
		code=$(json_field errorCode)
		retry=no
		case "$status" in
		429) retry=yes ;;
		# A failed provisioning leaves the migration PREPARING; a blind retry would
		# meet 409 from groups already ACTIVE and hide the cause.
		503) [ "$code" = REDIS_STREAM_PROVISIONING_FAILED ] || retry=yes ;;
		409) [ "$code" = STATE_VERSION_CONFLICT ] && retry=yes ;;
		000) [ "$method" = GET ] && retry=yes ;;
		esac
		if [ "$retry" = no ] || [ "$attempt" -ge 5 ]; then
			return 0
		fi
		wait_s=$(sed -n 's/^[Rr]etry-[Aa]fter:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$work/headers" 2>/dev/null | head -n 1)
		is_uint "${wait_s:-}" || wait_s=$((attempt * 2))
		[ "$wait_s" -le 30 ] || wait_s=30
		log "$method $path answered $status ${code:-}; retrying in ${wait_s}s (request id $rid)"
		sleep "$wait_s"
		attempt=$((attempt + 1))
		rm -f "$work/body" "$work/headers"
	done
}

# describe names a failed call: status, errorCode, message and request id.
describe() {
	case "$status" in
	000) printf 'coordinator unreachable at %s (request id %s)' "$base" "$rid" ;;
	401) printf '401 unauthorized: check coordinator_username and coordinator_password (request id %s)' "$rid" ;;
	403) printf '403 forbidden: the user needs the WRITE role (request id %s)' "$rid" ;;
	*) printf '%s %s: %s (request id %s)' "$status" "${code:-no errorCode}" "$(json_field message)" "$rid" ;;
	esac
}

# 1. Create the group (compat endpoint, the only one that names the group).
by=$(json_string "$requested_by")
why=$(json_string "$reason")
call POST "/streams/$prefix/groups/$group" create \
	"{\"initialShardCount\":$count,\"requestedBy\":\"$by\",\"reason\":\"$why\"}"
case "$status" in
200 | 201) log "created $prefix/$group with $count shards (request id $rid)" ;;
409)
	[ "$code" = GROUP_ALREADY_EXISTS ] || fail "create $prefix/$group: $(describe)"
	log "$prefix/$group already exists"
	;;
*) fail "create $prefix/$group: $(describe)" ;;
esac

# 2. Read the count producers see.
call GET "/streams/$prefix/groups/$group/producer-routing" routing-before
[ "$status" = 200 ] || fail "read producer routing of $prefix/$group: $(describe)"
current=$(json_number shardCount)
is_uint "${current:-}" || fail "read producer routing of $prefix/$group: no shardCount in the response"

# 3. Scale the whole stream when the count differs.
if [ "$current" -ne "$count" ]; then
	call POST "/streams/$prefix/scale" scale \
		"{\"targetShardCount\":$count,\"requestedBy\":\"$by\",\"reason\":\"$why\"}"
	case "$status" in
	200 | 202) log "scaling stream $prefix from $current to $count shards (request id $rid)" ;;
	409)
		[ "$code" = ACTIVE_MIGRATION_EXISTS ] || fail "scale $prefix to $count: $(describe)"
		# Every group of a stream scales the whole stream: when Terraform applies
		# several groups of one stream at once, another group's scale to this very
		# count may already be running. Then waiting for routing is right; any
		# other active resharding is not ours to wait for.
		scale_rid=$rid
		call GET "/streams/$prefix/groups/$group" active-migration
		target=$(json_number toShardCount)
		[ "$status" = 200 ] && [ "${target:-}" = "$count" ] ||
			fail "scale $prefix to $count: another resharding of stream $prefix (to ${target:-an unknown count of} shards) is still active; wait for it to complete (or roll it back) and apply again (request id $scale_rid)"
		log "stream $prefix is already being scaled to $count shards (another group's apply); waiting for it"
		;;
	503)
		[ "$code" = REDIS_STREAM_PROVISIONING_FAILED ] &&
			fail "scale $prefix to $count: Redis provisioning failed; the migration stays PREPARING and only the same shard_count resumes it: apply again once the other groups of $prefix finished (request id $rid)"
		fail "scale $prefix to $count: $(describe)"
		;;
	*) fail "scale $prefix to $count: $(describe)" ;;
	esac
else
	log "stream $prefix already routes $count shards"
fi

# 4. Wait until producer routing shows the target.
deadline=$(($(date +%s) + timeout))
while :; do
	call GET "/streams/$prefix/groups/$group/producer-routing" routing-after
	[ "$status" = 200 ] || fail "read producer routing of $prefix/$group: $(describe)"
	current=$(json_number shardCount)
	if [ "${current:-}" = "$count" ]; then
		log "producer routing of $prefix/$group shows $count shards"
		exit 0
	fi
	[ "$(date +%s)" -lt "$deadline" ] ||
		fail "producer routing of $prefix/$group still shows ${current:-?} shards, want $count, after ${timeout}s"
	sleep "$interval"
done
