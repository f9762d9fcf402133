#!/usr/bin/env bash
# The request engine names no concrete feature type: features plug in through `RequestFeature`
# (routing, exchange and request completion) and `RequestFeatureSettings`, so a new feature never
# touches the engine. This fails when `Sources/Courier/Core/RequestEngine*.swift` mentions a type
# declared in one of the routed or observing features' folders, or the "cache" transport string.
set -euo pipefail
cd "$(dirname "$0")/.."
# Folders under Sources/Courier. .ci/lint-layers.sh already keeps Core from naming their types; this
# also catches the session properties that hand them out and the "cache" string, and has no allowances.
features=(Features/CacheStore Features/ResponseCache Features/HTTPCache Features/Deduplication Requests/DownloadStore Requests/Downloads
  Requests/Streaming Features/ServerPool)
engine=(Sources/Courier/Core/RequestEngine*.swift)
names=()
for feature in "${features[@]}"; do
  while IFS= read -r name; do names+=("$name"); done < <(
    grep -hoE '^\s*(public |package |private |fileprivate )?(final )?(class|struct|enum|actor|typealias) [A-Z][A-Za-z0-9]*' \
      "Sources/Courier/$feature"/*.swift | awk '{print $NF}' | sort -u)
done
# Session properties that hand out a feature's object.
names+=(deduplicator responseCache serverPool downloadStore cacheSettings deduplicationPolicy)
status=0
for name in "${names[@]}"; do
  if grep -nw -- "$name" "${engine[@]}"; then
    echo "lint-engine: the request engine names the feature type or object '$name'"
    status=1
  fi
done
if grep -n '"cache"' "${engine[@]}"; then
  echo 'lint-engine: the request engine compares against the "cache" transport string'
  status=1
fi
[ "$status" -eq 0 ] && echo "lint-engine: RequestEngine*.swift names no concrete feature type (${#names[@]} names checked)"
exit "$status"
