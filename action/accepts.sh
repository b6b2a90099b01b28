#!/usr/bin/env bash
# Which findings the Action accepts (action.yml, step Check): the
# `Tracegate-Accept:` trailers of the pull request's head commit and the
# pull request's accept labels, as `tracegate check --accept` entries.
#
#  - a trailer `Tracegate-Accept: aten::mm` accepts that op's findings
#    (`rule:timeline.*` a rule's); several trailers, several entries;
#  - the label ACCEPT_LABEL itself accepts every finding (`rule:*`; an integrity finding needs `rule:integrity`);
#    `ACCEPT_LABEL:PATTERN` accepts the findings of PATTERN.
#
# Inputs, all through the environment (never pasted into this script):
#   ACCEPT_TRAILERS    `true` to read trailers
#   ACCEPT_LABEL       the label; empty: labels are not read
#   HEAD_SHA           the pull request's head commit; empty outside PRs
#   GITHUB_EVENT_PATH  the event payload (labels), as GitHub sets it
# Output (stdout), one per line: `warning=TEXT` for what could not be read,
# `reason=TEXT` once when anything is accepted, then `accept=PATTERN` per
# entry. Values are passed on as single arguments, never evaluated.
set -euo pipefail

patterns=()
sources=()

trim() {
    local text=${1//$'\r'/}
    text=${text#"${text%%[![:space:]]*}"}
    printf '%s' "${text%"${text##*[![:space:]]}"}"
}

if [ "${ACCEPT_TRAILERS:-true}" = true ] && [ -n "${HEAD_SHA:-}" ]; then
    # actions/checkout checks out the merge commit: fetch the head if needed.
    if ! git cat-file -e "$HEAD_SHA^{commit}" 2> /dev/null; then
        git fetch --quiet --depth=1 origin "$HEAD_SHA" 2> /dev/null || true
    fi
    if git cat-file -e "$HEAD_SHA^{commit}" 2> /dev/null; then
        found=false
        while IFS= read -r value; do
            value=$(trim "$value")
            if [ -n "$value" ]; then
                patterns+=("$value")
                found=true
            fi
        done < <(git log -1 --format='%(trailers:key=Tracegate-Accept,valueonly)' "$HEAD_SHA")
        if [ "$found" = true ]; then
            sources+=("Tracegate-Accept trailer of ${HEAD_SHA:0:12}")
        fi
    else
        echo "warning=cannot read commit ${HEAD_SHA:0:40}: its Tracegate-Accept trailers are not read"
    fi
fi

if [ -n "${ACCEPT_LABEL:-}" ] && [ -f "${GITHUB_EVENT_PATH:-}" ]; then
    labels=""
    if command -v jq > /dev/null; then
        labels=$(jq -r '(.pull_request.labels // [])[].name' "$GITHUB_EVENT_PATH")
    elif command -v python3 > /dev/null; then
        labels=$(python3 -c 'import json, sys
for label in (json.load(open(sys.argv[1])).get("pull_request") or {}).get("labels") or []:
    print(label.get("name", "").replace("\n", " "))' "$GITHUB_EVENT_PATH")
    else
        echo "warning=neither jq nor python3 is installed: the $ACCEPT_LABEL label is not read"
    fi
    while IFS= read -r label; do
        label=$(trim "$label")
        if [ "$label" = "$ACCEPT_LABEL" ]; then
            patterns+=("rule:*")
            sources+=("PR label $label")
        elif [ "${label#"$ACCEPT_LABEL:"}" != "$label" ]; then
            pattern=$(trim "${label#"$ACCEPT_LABEL:"}")
            if [ -n "$pattern" ]; then
                patterns+=("$pattern")
                sources+=("PR label $label")
            fi
        fi
    done <<< "$labels"
fi

if [ "${#patterns[@]}" -gt 0 ]; then
    reason=$(printf '%s; ' "${sources[@]}")
    echo "reason=${reason%; }"
    for pattern in "${patterns[@]}"; do
        echo "accept=$pattern"
    done
fi
