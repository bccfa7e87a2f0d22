#!/usr/bin/env bash
# Starts the topology of deploy/compose.yaml as plain processes on this
# machine (make cluster): MinIO, a JetStream cluster of three nats-servers
# (every stream and bucket with 3 replicas: nats.replicas), the API node,
# three recorder nodes and a fleet of synthetic cameras registered
# through the API. Prints where to look, then runs until Ctrl-C (SIGINT) or
# SIGTERM, when it stops the recorders first (they drain: finish and upload
# their segments, release their cameras), then the rest.
#
# Environment (defaults in brackets):
#   VIGIA_BIN          vigia binary                      [./bin/vigia]
#   VIGIA_TOOLS        folder holding the minio binary   [~/.cache/vigia/tools]
#   NATS_SERVER        nats-server binary   [built from the module cache with go]
#   CLUSTER_DIR        state and logs, emptied at start  [./data/cluster]
#   CLUSTER_CAMERAS    synthetic cameras                 [20]
#   CLUSTER_RECORDERS  recorder nodes                    [3]
#   CLUSTER_SEGMENT    recording.segment_duration        [10s]
#   CLUSTER_FLAGS      extra flags for every recorder    []
#   MINIO_PORT [9000] MINIO_CONSOLE_PORT [9001]
#   NATS_PORTS ["4222 4223 4224"] (or NATS_PORT [4222] and the next two)
#   NATS_CLUSTER_PORTS ["6222 6223 6224"] the servers' routes
#   SYNTH_PORT [8554] API_PORT [8080] RECORDER_PORTS ["8081 8082 8083"]
set -euo pipefail

VIGIA_BIN=${VIGIA_BIN:-./bin/vigia}
VIGIA_TOOLS=${VIGIA_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/vigia/tools}
CLUSTER_DIR=${CLUSTER_DIR:-./data/cluster}
CLUSTER_CAMERAS=${CLUSTER_CAMERAS:-20}
CLUSTER_RECORDERS=${CLUSTER_RECORDERS:-3}
CLUSTER_SEGMENT=${CLUSTER_SEGMENT:-10s}
CLUSTER_FLAGS=${CLUSTER_FLAGS:-}
MINIO_PORT=${MINIO_PORT:-9000}
MINIO_CONSOLE_PORT=${MINIO_CONSOLE_PORT:-9001}
NATS_PORT=${NATS_PORT:-4222}
NATS_PORTS=${NATS_PORTS:-"$NATS_PORT $((NATS_PORT + 1)) $((NATS_PORT + 2))"}
NATS_CLUSTER_PORTS=${NATS_CLUSTER_PORTS:-"6222 6223 6224"}
read -r -a N_PORTS <<<"$NATS_PORTS"
read -r -a N_ROUTES <<<"$NATS_CLUSTER_PORTS"
if [ "${#N_PORTS[@]}" -ne 3 ] || [ "${#N_ROUTES[@]}" -ne 3 ]; then
	echo "cluster: NATS_PORTS and NATS_CLUSTER_PORTS each name 3 ports" >&2
	exit 2
fi
SYNTH_PORT=${SYNTH_PORT:-8554}
API_PORT=${API_PORT:-8080}
RECORDER_PORTS=${RECORDER_PORTS:-}
if [ -z "$RECORDER_PORTS" ]; then
	for ((i = 1; i <= CLUSTER_RECORDERS; i++)); do RECORDER_PORTS="$RECORDER_PORTS $((API_PORT + i))"; done
fi
read -r -a REC_PORTS <<<"$RECORDER_PORTS"
if [ "${#REC_PORTS[@]}" -lt "$CLUSTER_RECORDERS" ]; then
	echo "cluster: RECORDER_PORTS names ${#REC_PORTS[@]} ports for $CLUSTER_RECORDERS recorders" >&2
	exit 2
fi

MINIO=$VIGIA_TOOLS/minio
for tool in "$VIGIA_BIN" "$MINIO"; do
	if [ ! -x "$tool" ]; then
		echo "cluster: $tool not found (make build deps-tools builds it)" >&2
		exit 2
	fi
done
for tool in curl jq; do
	command -v "$tool" >/dev/null || { echo "cluster: $tool is needed (apt-get install $tool)" >&2; exit 2; }
done

VIGIA_BIN=$(cd "$(dirname "$VIGIA_BIN")" && pwd)/$(basename "$VIGIA_BIN")
rm -rf "$CLUSTER_DIR"
mkdir -p "$CLUSTER_DIR"/{logs,pids,minio,nats-1,nats-2,nats-3}
CLUSTER_DIR=$(cd "$CLUSTER_DIR" && pwd)
LOGS=$CLUSTER_DIR/logs
PIDS=$CLUSTER_DIR/pids

secret() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
SECRET=$(secret)
OPERATOR_TOKEN=vgo_$(secret)
MINIO_USER=vigia
MINIO_PASSWORD=$(secret)
NATS_URL=nats://127.0.0.1:${N_PORTS[0]},nats://127.0.0.1:${N_PORTS[1]},nats://127.0.0.1:${N_PORTS[2]}
ROUTES=nats://127.0.0.1:${N_ROUTES[0]},nats://127.0.0.1:${N_ROUTES[1]},nats://127.0.0.1:${N_ROUTES[2]}
NATS_SERVER=${NATS_SERVER:-}
if [ -z "$NATS_SERVER" ]; then
	# nats-server is a dependency of Vigia: its binary builds from the
	# module cache.
	command -v go >/dev/null || { echo "cluster: set NATS_SERVER to a nats-server binary, or install go to build one" >&2; exit 2; }
	NATS_SERVER=$CLUSTER_DIR/nats-server
	(cd "$(dirname "$0")/../.." && go build -o "$NATS_SERVER" github.com/nats-io/nats-server/v2)
fi
API_URL=http://127.0.0.1:$API_PORT

# start NAME CMD...: runs CMD in the background in its own session (so a
# Ctrl-C reaches this script only, which stops the cluster in order), output
# in logs/NAME.log.
start() {
	local name=$1
	shift
	setsid "$@" >"$LOGS/$name.log" 2>&1 &
	echo $! >"$PIDS/$name.pid"
}

pid_of() { cat "$PIDS/$1.pid" 2>/dev/null || true; }

# stop_proc NAME: SIGTERM, then wait for the process to exit.
stop_proc() {
	local pid
	pid=$(pid_of "$1")
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -f "$PIDS/$1.pid"
}

stopping=0
stop_all() {
	[ "$stopping" = 0 ] || return 0
	stopping=1
	echo
	echo "cluster: stopping (recorders drain first: segments finished and uploaded)"
	local r
	for ((r = 1; r <= CLUSTER_RECORDERS; r++)); do
		pid=$(pid_of "recorder-$r")
		[ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null || true
	done
	for ((r = 1; r <= CLUSTER_RECORDERS; r++)); do stop_proc "recorder-$r"; done
	stop_proc api
	stop_proc synthcam
	stop_proc nats-1
	stop_proc nats-2
	stop_proc nats-3
	stop_proc minio
	echo "cluster: stopped; state and logs kept in $CLUSTER_DIR"
}
trap 'stop_all; exit 0' INT TERM
trap 'stop_all' EXIT

# wait_http URL NAME: polls URL until it answers 200 (60 s).
wait_http() {
	local i
	for ((i = 0; i < 600; i++)); do
		if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
		pid=$(pid_of "$2")
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			echo "cluster: $2 exited; its log:" >&2
			tail -n 20 "$LOGS/$2.log" >&2
			exit 1
		fi
		sleep 0.1
	done
	echo "cluster: $2 not ready at $1 after 60 s; its log:" >&2
	tail -n 20 "$LOGS/$2.log" >&2
	exit 1
}

# wait_log NAME TEXT: waits until logs/NAME.log contains TEXT (60 s).
wait_log() {
	local i
	for ((i = 0; i < 600; i++)); do
		if grep -q "$2" "$LOGS/$1.log" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "cluster: $1 did not start; its log:" >&2
	tail -n 20 "$LOGS/$1.log" >&2
	exit 1
}

# node_config NAME HTTP_PORT: the configuration file of a Vigia node.
node_config() {
	mkdir -p "$CLUSTER_DIR/$1"
	cat >"$CLUSTER_DIR/$1/vigia.yaml" <<EOF
# $1 of the local cluster (deploy/cluster/run.sh)
node_id: $1
data_dir: $CLUSTER_DIR/$1
log: {level: info, format: json}
http: {addr: "127.0.0.1:$2", cors_origins: "$API_URL"}
rtmp: {addr: "127.0.0.1:0"}
nats: {url: "$NATS_URL", replicas: 3}
storage:
  backend: s3
  endpoint: "127.0.0.1:$MINIO_PORT"
  bucket: vigia
  access_key: $MINIO_USER
  secret_key: "$MINIO_PASSWORD"
recording: {segment_duration: $CLUSTER_SEGMENT}
ingest: {allow_private_networks: true, backoff_max: 5s}
security: {secret: "$SECRET"}
operator_token: "$OPERATOR_TOKEN"
EOF
	echo "$CLUSTER_DIR/$1/vigia.yaml"
}

echo "cluster: starting in $CLUSTER_DIR"
MINIO_ROOT_USER=$MINIO_USER MINIO_ROOT_PASSWORD=$MINIO_PASSWORD MINIO_BROWSER=off \
	start minio "$MINIO" server --quiet --address "127.0.0.1:$MINIO_PORT" \
	--console-address "127.0.0.1:$MINIO_CONSOLE_PORT" "$CLUSTER_DIR/minio"
wait_http "http://127.0.0.1:$MINIO_PORT/minio/health/live" minio

for n in 1 2 3; do
	start "nats-$n" "$NATS_SERVER" --name "nats-$n" --addr 127.0.0.1 --port "${N_PORTS[$((n - 1))]}" \
		--jetstream --store_dir "$CLUSTER_DIR/nats-$n" \
		--cluster_name vigia --cluster "nats://127.0.0.1:${N_ROUTES[$((n - 1))]}" --routes "$ROUTES"
done
for n in 1 2 3; do wait_log "nats-$n" "Server is ready"; done
# The streams and buckets (3 replicas each) can be made once every server
# knows the metadata leader ("Self is new JetStream cluster metadata leader"
# on the leader, "JetStream cluster new metadata leader" on the others).
for n in 1 2 3; do wait_log "nats-$n" "metadata leader"; done

start synthcam "$VIGIA_BIN" synthcam --addr "127.0.0.1:$SYNTH_PORT" --cameras "$CLUSTER_CAMERAS"
wait_log synthcam "rtsp://"

start api "$VIGIA_BIN" api --config "$(node_config api "$API_PORT")"
wait_http "$API_URL/readyz" api

RECORDER_URLS=""
for ((r = 1; r <= CLUSTER_RECORDERS; r++)); do
	port=${REC_PORTS[$((r - 1))]}
	# shellcheck disable=SC2086 # CLUSTER_FLAGS is a list of flags
	start "recorder-$r" "$VIGIA_BIN" recorder --config "$(node_config "recorder-$r" "$port")" $CLUSTER_FLAGS
	RECORDER_URLS="$RECORDER_URLS http://127.0.0.1:$port"
done
for ((r = 1; r <= CLUSTER_RECORDERS; r++)); do
	wait_http "http://127.0.0.1:${REC_PORTS[$((r - 1))]}/readyz" "recorder-$r"
done

API_TOKEN=$(bash "$(dirname "$0")/register.sh" "$API_URL" "$OPERATOR_TOKEN" "127.0.0.1:$SYNTH_PORT" "$CLUSTER_CAMERAS" | tail -n 1)

cat >"$CLUSTER_DIR/cluster.env" <<EOF
API_URL=$API_URL
API_TOKEN=$API_TOKEN
OPERATOR_TOKEN=$OPERATOR_TOKEN
NATS_URL=$NATS_URL
MINIO_ENDPOINT=127.0.0.1:$MINIO_PORT
MINIO_USER=$MINIO_USER
MINIO_PASSWORD=$MINIO_PASSWORD
BUCKET=vigia
RECORDER_URLS="${RECORDER_URLS# }"
CAMERAS=$CLUSTER_CAMERAS
EOF

cat <<EOF

cluster running: MinIO, NATS (3 servers, replicas 3), API, $CLUSTER_RECORDERS recorders, $CLUSTER_CAMERAS synthetic cameras
  API           $API_URL  (user api_token: $API_TOKEN)
                curl '$API_URL/api/v4/cameras?token=$API_TOKEN' | jq '.'
  cameras       $VIGIA_BIN cameras --nats.url $NATS_URL
  recorders    $(for u in $RECORDER_URLS; do printf ' %s/metrics?token=%s' "$u" "$OPERATOR_TOKEN"; done)
  NATS          $NATS_URL
  MinIO         http://127.0.0.1:$MINIO_PORT  bucket vigia  (user $MINIO_USER, password in $CLUSTER_DIR/cluster.env)
  logs          $LOGS
  drain a node  kill -TERM \$(cat $PIDS/recorder-1.pid)
Ctrl-C stops everything.
cluster ready
EOF

while true; do
	sleep 1 &
	wait $! || true
done
