#!/usr/bin/env bash
# Registers a fleet of synthetic cameras through the API: one client with
# one ADMIN user, then COUNT RTSP cameras rtsp://SYNTH/cam-1 … cam-COUNT.
# Prints the user's api_token on the last line. Used by run.sh (make
# cluster) and by the register service of deploy/compose.yaml.
#
# Usage: register.sh API_URL OPERATOR_TOKEN SYNTH_HOST:PORT COUNT
set -euo pipefail
API_URL=$1 OPERATOR_TOKEN=$2 SYNTH=$3 COUNT=$4

# api METHOD PATH [JSON]: calls the API with the operator token.
api() {
	local sep='?'
	case $2 in *\?*) sep='&' ;; esac
	curl -fsS -X "$1" -H 'Content-Type: application/json' ${3:+--data "$3"} "$API_URL$2${sep}token=$OPERATOR_TOKEN"
}

info=$(api GET /api/v1/cameras/create)
model_id=$(jq -r '.manufacturer[0].camera_model[0].id' <<<"$info")
resolution_id=$(jq -r '.plans.resolutions[-1].id' <<<"$info")
history_days=$(jq -r '.plans.history_days[0]' <<<"$info")
client=$(api POST /api/v1/clients "$(jq -nc '{name: "Local cluster", document_type: 2, document_number: "11222333000181",
	phone: "11 5555-0000", cep: "01000-000", address: "Rua A", address_number: "1", address_nh: "Centro",
	city: "São Paulo", state: "SP", users: [{name: "Operator", email: "operator@cluster.local", phone: "11",
	user_type: 2, password: "cluster-password", password_conf: "cluster-password"}]}')")
client_id=$(jq -r '.[0].id' <<<"$client")
for ((c = 1; c <= COUNT; c++)); do
	api POST /api/v1/cameras "$(jq -nc --argjson client "$client_id" --argjson model "$model_id" \
		--argjson res "$resolution_id" --argjson days "$history_days" \
		--arg url "rtsp://$SYNTH/cam-$c" --arg desc "Synthetic camera $c" \
		'{description: $desc, camera_address: "Rua A, 1", latitude: "-23.55", longitude: "-46.63",
		connection_type: 0, resolution_id: $res, history_days: $days, client_id: $client, model_id: $model,
		stream: "0", typed_url: $url}')" >/dev/null
done
jq -r '.[0].users[0].api_token' <<<"$client"
