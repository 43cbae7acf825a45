#!/usr/bin/env bash
# Ask a question through Belfry and wait for a person's answer (docs/questions.md).
#
#   BELFRY_URL=https://belfry.example.com BELFRY_KEY=A... ./ask.sh "Deploy 4.2 to production?" yes no
#
# The first argument is the question, the others are the options (none: a free-text question).
# Prints the answer on stdout: an option or a text answer as plain text, any other answer as JSON.
# Progress and errors go to stderr.
#
# Exit status: 0 answered; 2 expired or cancelled (no answer); 1 error (bad input, refused, network).
#
# Environment:
#   BELFRY_URL                the server's address (required)
#   BELFRY_KEY                a channel key with write permission (required)
#   BELFRY_TITLE              the message title (default: the server's, "Question")
#   BELFRY_TIMEOUT_S          how long the question stays open, 1-86400 seconds (default 3600)
#   BELFRY_CLIENT_MESSAGE_ID  an idempotency key: running again with the same id waits for the same
#                             question instead of asking a new one
#   BELFRY_POLL_S             seconds between two polls (default 5; fractions such as 0.5 work)
#
# Needs bash, curl and the POSIX tools (awk, sleep); no jq.
set -u

: "${BELFRY_URL:?set BELFRY_URL to the server address}"
: "${BELFRY_KEY:?set BELFRY_KEY to a channel key}"
BASE=${BELFRY_URL%/}
POLL_S=${BELFRY_POLL_S:-5}
TIMEOUT_S=${BELFRY_TIMEOUT_S:-3600}

if [ $# -lt 1 ] || [ -z "$1" ]; then
  echo "usage: $0 QUESTION [OPTION...]" >&2
  exit 1
fi

# A JSON string literal for $1 (the escapes JSON requires).
json_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  printf '"%s"' "$s"
}

# Prints the raw JSON value of the top-level key $1 of the JSON object on stdin (nothing when absent).
json_get() {
  awk -v want="$1" '
    { doc = doc $0 "\n" }
    END {
      n = length(doc); depth = 0; instr = 0; esc = 0; key = ""; cur = ""; capture = 0; start = 0
      for (i = 1; i <= n; i++) {
        c = substr(doc, i, 1)
        if (instr) {
          if (esc) esc = 0
          else if (c == "\\") esc = 1
          else if (c == "\"") instr = 0
          if (!instr && depth == 1 && !capture) last = substr(doc, sstart, i - sstart + 1)
          continue
        }
        if (c == "\"") { instr = 1; sstart = i; continue }
        if (c == "{" || c == "[") { depth++; continue }
        if (c == "}" || c == "]") {
          if (depth == 1 && capture) { print trim(substr(doc, start, i - start)); exit }
          depth--; continue
        }
        if (depth == 1 && c == ":" && !capture) {
          if (last == "\"" want "\"") { capture = 1; start = i + 1 }
          continue
        }
        if (depth == 1 && c == "," && capture) { print trim(substr(doc, start, i - start)); exit }
      }
    }
    function trim(s) { gsub(/^[ \t\r\n]+|[ \t\r\n]+$/, "", s); return s }
  '
}

# A JSON string on stdin as plain text; any other JSON value unchanged.
json_text() {
  awk '
    { doc = doc (NR > 1 ? "\n" : "") $0 }
    END {
      if (substr(doc, 1, 1) != "\"") { print doc; exit }
      out = ""; n = length(doc) - 1
      for (i = 2; i <= n; i++) {
        c = substr(doc, i, 1)
        if (c != "\\") { out = out c; continue }
        c = substr(doc, ++i, 1)
        if (c == "n") out = out "\n"
        else if (c == "t") out = out "\t"
        else if (c == "r") out = out "\r"
        else if (c == "b") out = out "\b"
        else if (c == "f") out = out "\f"
        else if (c == "u") {
          hex = tolower(substr(doc, i + 1, 4)); i += 4; code = 0
          for (k = 1; k <= 4; k++) code = code * 16 + index("0123456789abcdef", substr(hex, k, 1)) - 1
          # JSON.stringify only writes \u for control characters; others are kept as written.
          out = out (code < 128 ? sprintf("%c", code) : "\\u" hex)
        } else out = out c
      }
      print out
    }
  '
}

# api METHOD PATH [BODY]: sets STATUS (HTTP status, 000 when the request failed) and BODY.
# The key goes in a header read from a file descriptor, so it does not show in the process list.
api() {
  local out
  out=$(curl -sS --max-time 30 -X "$1" "$BASE$2" \
    -H @<(printf 'Authorization: Bearer %s\n' "$BELFRY_KEY") \
    -H 'Content-Type: application/json' \
    ${3:+--data-binary "$3"} \
    -w '\n%{http_code}') || { STATUS=000; BODY=''; return; }
  STATUS=${out##*$'\n'}
  BODY=${out%$'\n'*}
}

# The error text of an error body ({error, errorCode, errorDescription}).
describe() {
  local d
  d=$(printf '%s' "$BODY" | json_get errorDescription | json_text)
  printf 'HTTP %s%s' "$STATUS" "${d:+: $d}"
}

question=$(json_string "$1")
shift
options=''
for o in "$@"; do options="${options:+$options,}$(json_string "$o")"; done

body="{\"question\":$question,\"options\":[$options],\"timeout_sec\":$TIMEOUT_S"
[ -n "${BELFRY_TITLE:-}" ] && body="$body,\"title\":$(json_string "$BELFRY_TITLE")"
[ -n "${BELFRY_CLIENT_MESSAGE_ID:-}" ] && body="$body,\"clientMessageId\":$(json_string "$BELFRY_CLIENT_MESSAGE_ID")"
body="$body}"

api POST /ask "$body"
if [ "$STATUS" != 200 ]; then
  echo "ask.sh: POST /ask failed: $(describe)" >&2
  exit 1
fi
id=$(printf '%s' "$BODY" | json_get id)
case $id in '' | *[!0-9]*)
  echo "ask.sh: POST /ask answered without an id: $BODY" >&2
  exit 1
  ;;
esac
echo "ask.sh: question $id asked; waiting for an answer" >&2

failures=0
while :; do
  api GET "/ask-question/$id"
  case $STATUS in
    200)
      failures=0
      status=$(printf '%s' "$BODY" | json_get status | json_text)
      case $status in
        answered)
          printf '%s' "$BODY" | json_get answer | json_text
          exit 0
          ;;
        expired | cancelled)
          echo "ask.sh: question $id $status" >&2
          exit 2
          ;;
      esac
      ;;
    410)
      # Expired or cancelled: the record is gone from this route.
      echo "ask.sh: $(describe)" >&2
      exit 2
      ;;
    000 | 408 | 429 | 5??)
      # The server is restarting or the network is down: keep waiting, but not forever.
      failures=$((failures + 1))
      if [ "$failures" -ge 20 ]; then
        echo "ask.sh: giving up after $failures failed polls: $(describe)" >&2
        exit 1
      fi
      ;;
    *)
      echo "ask.sh: GET /ask-question/$id failed: $(describe)" >&2
      exit 1
      ;;
  esac
  sleep "$POLL_S"
done
